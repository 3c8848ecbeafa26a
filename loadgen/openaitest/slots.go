package openaitest

import "net/http"

// acquire waits for a free slot (without Slots, at once); false when the
// client went away first. A channel's waiting receivers are served in
// arrival order, so the queue is FIFO.
func (s *Server) acquire(r *http.Request) bool {
	if s.Slots <= 0 {
		return true
	}
	s.once.Do(func() {
		s.slots = make(chan struct{}, s.Slots)
		for range s.Slots {
			s.slots <- struct{}{}
		}
	})
	select {
	case <-s.slots:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) release() {
	if s.Slots > 0 {
		s.slots <- struct{}{}
	}
}

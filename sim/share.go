package sim

import (
	"math"
	"slices"
)

// sharedServer is processor sharing: every job in it progresses at once,
// the capacity split equally among them. It serves the KV-transfer link
// (bytes on a shared fabric) and the frontend's event loop (CPU time of
// the requests a single-process server prepares at once). Work is in the
// server's own unit; rate is the work it does in a ns, all jobs together.
// The simulator asks it when the next job ends at the current shares and
// schedules an event then; a job joining or leaving changes the shares,
// and the generation makes the event scheduled before it stale.
type sharedServer struct {
	rate float64
	jobs []shareJob // in join order
	last int64      // when the jobs' left work was last brought up to date
	gen  int32      // generation of the pending check
}

// shareJob is one job's work still to do and whose it is (a request's
// workload index).
type shareJob struct {
	left float64
	id   int32
}

// advance does every job's share of the work up to now.
func (q *sharedServer) advance(now int64) {
	if n := len(q.jobs); n > 0 && now > q.last {
		done := float64(now-q.last) * q.rate / float64(n)
		for i := range q.jobs {
			q.jobs[i].left -= done
		}
	}
	q.last = now
}

// join adds a job of work units at now.
func (q *sharedServer) join(now int64, id int32, work float64) {
	q.advance(now)
	q.jobs = append(q.jobs, shareJob{left: work, id: id})
}

// next is the generation and time of the check for the job that ends
// first at the current shares, and false when the server is idle. Any
// earlier check is stale from here on.
func (q *sharedServer) next(now int64) (int32, int64, bool) {
	q.gen++
	if len(q.jobs) == 0 {
		return q.gen, 0, false
	}
	least := q.jobs[0].left
	for _, j := range q.jobs[1:] {
		least = min(least, j.left)
	}
	dt := int64(math.Ceil(max(0, least) * float64(len(q.jobs)) / q.rate))
	return q.gen, now + dt, true
}

// stale is whether a check of generation gen was overtaken by a change.
func (q *sharedServer) stale(gen int32) bool { return gen != q.gen }

// finish removes the jobs whose work is done at now (less than half a unit
// left: float rounding of the shares) and appends their ids to dst, in
// join order.
func (q *sharedServer) finish(now int64, dst []int32) []int32 {
	q.advance(now)
	q.jobs = slices.DeleteFunc(q.jobs, func(j shareJob) bool {
		if j.left < 0.5 {
			dst = append(dst, j.id)
			return true
		}
		return false
	})
	return dst
}

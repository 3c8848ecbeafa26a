package openaitest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"time"
)

// FastServer is a lean streaming server for load benchmarks: HTTP/1.1 over
// raw TCP with keep-alive, every request answered with the same chat
// stream (role chunk, Tokens content chunks, [DONE]), each SSE event one
// precomputed HTTP chunk in one write, token k due at arrival + TTFT + k·ITL
// (deadlines, no drift). It costs about a write system call and a timer
// wake-up per token, well under net/http's per-event cost, so on a shared
// machine more of the CPU goes to the client being measured.
type FastServer struct {
	TTFT, ITL time.Duration
	Tokens    int
}

// Serve accepts connections on l until it fails.
func (fs *FastServer) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go fs.conn(c)
	}
}

var (
	fastHeader = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
	fastRole   = fastChunk(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
	fastToken  = fastChunk(`data: {"choices":[{"index":0,"delta":{"content":" tok"}}]}` + "\n\n")
	fastDone   = append(fastChunk("data: [DONE]\n\n"), "0\r\n\r\n"...)
	fastStart  = append(append([]byte(nil), fastHeader...), fastRole...)
)

func fastChunk(s string) []byte {
	return []byte(strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n")
}

func (fs *FastServer) conn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	for {
		arrived, err := readRequest(br)
		if err != nil {
			return
		}
		if !fs.respond(c, arrived) {
			return
		}
	}
}

// readRequest consumes one request (headers and a Content-Length body) and
// returns when its first line arrived.
func readRequest(br *bufio.Reader) (time.Time, error) {
	length := 0
	var arrived time.Time
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return arrived, err
		}
		if arrived.IsZero() {
			arrived = time.Now()
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return arrived, errors.New("bad Content-Length")
			}
		}
	}
	_, err := br.Discard(length)
	return arrived, err
}

func (fs *FastServer) respond(w io.Writer, arrived time.Time) bool {
	if _, err := w.Write(fastStart); err != nil {
		return false
	}
	for k := range fs.Tokens {
		if d := time.Until(arrived.Add(fs.TTFT + time.Duration(k)*fs.ITL)); d > 0 {
			time.Sleep(d)
		}
		if _, err := w.Write(fastToken); err != nil {
			return false
		}
	}
	_, err := w.Write(fastDone)
	return err == nil
}

package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// conns holds one kept-alive connection per worker to one server. The
// calls of a load test are many and small, and net/http's Transport hands
// every request between three goroutines (the caller's and the
// connection's reader and writer): on the two cores that the load
// generator shares with the server, that cost it as much CPU per read as
// the server spent answering. A worker writes the request as net/http
// writes it (Request.Write) and reads each answer whole with net/http's
// parser on its own goroutine; every call still goes to the server.
type conns struct {
	addr string
	// timeout bounds each call, as the Client's does.
	timeout time.Duration

	mu    sync.Mutex
	slots []*slot
}

// slot is one worker's: its connection (nil until dialed; guarded by
// conns.mu, which close takes from another goroutine) and the buffers its
// calls reuse.
type slot struct {
	conn       *wireConn
	wire, body bytes.Buffer
}

type wireConn struct {
	net.Conn
	r *bufio.Reader
	// used tells that an answer came over the connection: a server may
	// close a kept-alive connection as a request is sent, which is
	// retried once on a new one, as net/http's Transport does.
	used bool
}

// newConns returns the connections to the host of u, a plain HTTP URL.
func newConns(u *url.URL, timeout time.Duration) *conns {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &conns{addr: addr, timeout: timeout}
}

// send writes req over worker w's connection, as wire (the bytes
// req.Write wrote) when given and else written anew, and reads the answer
// whole. It returns the answer's body, valid until the worker's next call;
// an answer outside 2xx is a *StatusError.
func (p *conns) send(ctx context.Context, w int, req *http.Request, wire []byte) ([]byte, error) {
	s := p.slot(w)
	if wire == nil {
		s.wire.Reset()
		if err := req.Write(&s.wire); err != nil {
			return nil, err
		}
		wire = s.wire.Bytes()
	}
	for {
		c, err := p.conn(ctx, s)
		if err != nil {
			return nil, err
		}
		status, keep, err := p.exchange(c, req, wire, &s.body)
		if err != nil || !keep {
			p.drop(s)
		}
		if err != nil {
			if c.used && status == 0 && ctx.Err() == nil {
				continue
			}
			return nil, err
		}
		c.used = true
		return answer(status, s.body.Bytes())
	}
}

// exchange sends wire over c and reads the answer's body whole into body:
// it returns the answer's status and whether the connection stays open. A
// status of 0 means no answer came.
func (p *conns) exchange(c *wireConn, req *http.Request, wire []byte, body *bytes.Buffer) (status int, keep bool, err error) {
	if err := c.SetDeadline(time.Now().Add(p.timeout)); err != nil {
		return 0, false, err
	}
	if _, err := c.Write(wire); err != nil {
		return 0, false, err
	}
	resp, err := http.ReadResponse(c.r, req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return resp.StatusCode, false, err
	}
	return resp.StatusCode, !resp.Close, nil
}

// slot returns worker w's slot.
func (p *conns) slot(w int) *slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w >= len(p.slots) {
		p.slots = append(p.slots, &slot{})
	}
	return p.slots[w]
}

// conn returns the slot's connection, dialed if it has none; a connection
// is bound to ctx, the context of the call that dials it.
func (p *conns) conn(ctx context.Context, s *slot) (*wireConn, error) {
	p.mu.Lock()
	c := s.conn
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	// A call under way when ctx ends fails at once.
	context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	c = &wireConn{Conn: nc, r: bufio.NewReader(nc)}
	p.mu.Lock()
	s.conn = c
	p.mu.Unlock()
	return c, nil
}

// drop closes the slot's connection; the next call dials a new one.
func (p *conns) drop(s *slot) {
	p.mu.Lock()
	c := s.conn
	s.conn = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// close closes every connection.
func (p *conns) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
	}
}

// A sender sends req from worker w and returns the whole body of a 2xx
// answer, valid until the worker's next call.
type sender func(ctx context.Context, w int, req *http.Request) ([]byte, error)

// sender returns how workers send their requests: over a connection of
// their own each (see conns), unless the URL is not plain HTTP, and the
// func that closes those connections.
func (c *Client) sender() (sender, func()) {
	u, err := url.Parse(c.base)
	if err != nil || u.Scheme != "http" {
		return c.do, func() {}
	}
	p := newConns(u, c.http.Timeout)
	return func(ctx context.Context, w int, req *http.Request) ([]byte, error) {
		return p.send(ctx, w, req, nil)
	}, p.close
}

// Get is an Op that reads path, as Call does with no body and no answer
// decoded, over a connection of its own per worker (see conns), with the
// request bytes written once; a URL that is not plain HTTP is read through
// Call.
func (c *Client) Get(path string) Op {
	call := func(ctx context.Context, _, _ int) error { return c.Call(ctx, "GET", path, nil, nil) }
	req, err := c.newRequest(context.Background(), "GET", path, nil)
	if err != nil || req.URL.Scheme != "http" {
		return call
	}
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		return call
	}
	p := newConns(req.URL, c.http.Timeout)
	c.mu.Lock()
	c.conns = append(c.conns, p)
	c.mu.Unlock()
	return func(ctx context.Context, w, _ int) error {
		_, err := p.send(ctx, w, req, wire.Bytes())
		return err
	}
}

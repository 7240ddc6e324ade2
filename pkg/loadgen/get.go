package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A getter reads one path over one kept-alive connection per worker. The
// reads of a load test are many and small, and net/http's Transport hands
// every request between three goroutines (the caller's and the
// connection's reader and writer): on the two cores that the load
// generator shares with the server, that cost it as much CPU per read as
// the server spent answering. A getter writes the request net/http wrote
// once and reads each answer with net/http's parser on the worker's own
// goroutine; every read still goes to the server and is read whole.
type getter struct {
	addr string
	wire []byte
	req  *http.Request
	// timeout bounds each call, as the Client's does.
	timeout time.Duration

	mu    sync.Mutex
	conns []*getConn
}

type getConn struct {
	net.Conn
	r *bufio.Reader
	// used tells that an answer came over the connection: a server may
	// close a kept-alive connection as a request is sent, which is
	// retried once on a new one, as net/http's Transport does.
	used bool
}

// newGetter returns a getter of the GET request req, which has no body.
func newGetter(req *http.Request, timeout time.Duration) (*getter, error) {
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		return nil, err
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	return &getter{addr: addr, wire: wire.Bytes(), req: req, timeout: timeout}, nil
}

// conn returns worker w's connection, dialed if it has none; a connection
// is bound to ctx, the context of the call that dials it.
func (g *getter) conn(ctx context.Context, w int) (*getConn, error) {
	g.mu.Lock()
	if w >= len(g.conns) {
		g.conns = append(g.conns, make([]*getConn, w+1-len(g.conns))...)
	}
	c := g.conns[w]
	g.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", g.addr)
	if err != nil {
		return nil, err
	}
	// A call under way when ctx ends fails at once.
	context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	c = &getConn{Conn: nc, r: bufio.NewReader(nc)}
	g.mu.Lock()
	g.conns[w] = c
	g.mu.Unlock()
	return c, nil
}

// drop closes worker w's connection; the next call dials a new one.
func (g *getter) drop(w int) {
	g.mu.Lock()
	c := g.conns[w]
	g.conns[w] = nil
	g.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// close closes every connection.
func (g *getter) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range g.conns {
		if c != nil {
			c.Close()
			g.conns[i] = nil
		}
	}
}

// call reads the path once from worker w's connection, as Client.Call does
// with no body and no answer decoded.
func (g *getter) call(ctx context.Context, w, _ int) error {
	for {
		c, err := g.conn(ctx, w)
		if err != nil {
			return err
		}
		status, body, keep, err := g.roundTrip(c)
		if err != nil || !keep {
			g.drop(w)
		}
		if err != nil {
			if c.used && status == 0 && ctx.Err() == nil {
				continue
			}
			return err
		}
		c.used = true
		if status < 200 || status > 299 {
			return &StatusError{Status: status, Body: body}
		}
		return nil
	}
}

// roundTrip sends the request over c and reads the answer whole: its
// status, the start of its body when it is not 2xx, and whether the
// connection stays open. A status of 0 means no answer came.
func (g *getter) roundTrip(c *getConn) (status int, body string, keep bool, err error) {
	if err := c.SetDeadline(time.Now().Add(g.timeout)); err != nil {
		return 0, "", false, err
	}
	if _, err := c.Write(g.wire); err != nil {
		return 0, "", false, err
	}
	resp, err := http.ReadResponse(c.r, g.req)
	if err != nil {
		return 0, "", false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		body = strings.TrimSpace(string(b))
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, "", false, err
	}
	return resp.StatusCode, body, !resp.Close, nil
}

package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// waitPath is the waitForExecution request of an execution with the
// query given.
func waitPath(workflowID, id, query string) string {
	p := "/v1/workflows/waitForExecution?workflow_id=" + workflowID + "&workflow_execution_id=" + id
	if query != "" {
		p += "&" + query
	}
	return p
}

// waitAsync sends a request in the background; the answer arrives on the
// channel (a failed request arrives with status 0).
func (e *env) waitAsync(path, key string) <-chan response {
	out := make(chan response, 1)
	go func() {
		var r response
		defer func() { out <- r }()
		req, err := http.NewRequest("GET", e.srv.URL+path, nil)
		if err != nil {
			return
		}
		req.Header.Set("x-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || json.Unmarshal(raw, &r.body) != nil {
			return
		}
		r.status, r.raw = resp.StatusCode, raw
	}()
	return out
}

func TestWaitForExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf, _ := e.publishedApproval(admin)
	start := func(pid string) string {
		t.Helper()
		r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id="+pid, map[string]any{"amount": 5000})
		if r.status != 200 {
			t.Fatalf("trigger: got %d %s", r.status, r.raw)
		}
		id := str(r.body["service_execution_id"])
		e.awaitStatus(admin, wf, id, "WAITING")
		return id
	}
	resume := func(pid string) {
		t.Helper()
		if r := e.do("POST", "/v1/workflows/resumeworkflow/"+pid, admin, map[string]any{"source": "TEAMS", "decision": "approve"}); r.status != 200 {
			t.Fatalf("resume: got %d %s", r.status, r.raw)
		}
	}

	t.Run("until final wakes on the end", func(t *testing.T) {
		id := start("PO-final")
		// Without the wake-up the request would answer WAITING after 25 s.
		answer := e.waitAsync(waitPath(wf, id, ""), admin)
		resume("PO-final")
		r := <-answer
		if r.status != 200 || r.body["message"] != "success" {
			t.Fatalf("got %d %s, want 200", r.status, r.raw)
		}
		if got := r.body["item"].(map[string]any)["status"]; got != "SUCCEEDED" {
			t.Errorf("status: got %v, want SUCCEEDED", got)
		}
		// Finished, it answers at once, exactly as getWorkflowExecutionById.
		got := e.do("GET", waitPath(wf, id, "until=final&timeout=25"), admin, nil)
		want := e.get("/v1/workflows/getWorkflowExecutionById", admin, "workflow_id", wf, "workflow_execution_id", id)
		if got.status != 200 || string(got.raw) != string(want.raw) {
			t.Errorf("got %d %s,\nwant %d %s", got.status, got.raw, want.status, want.raw)
		}
	})

	t.Run("until change wakes on the next change", func(t *testing.T) {
		id := start("PO-change")
		now := e.do("GET", waitPath(wf, id, "timeout=0"), admin, nil)
		item := now.body["item"].(map[string]any)
		if item["status"] != "WAITING" {
			t.Fatalf("timeout=0: got status %v, want WAITING at once", item["status"])
		}
		since := int64(item["modified_on"].(float64))
		answer := e.waitAsync(waitPath(wf, id, "until=change&since="+strconv.FormatInt(since, 10)), admin)
		resume("PO-change")
		r := <-answer
		if r.status != 200 {
			t.Fatalf("got %d %s, want 200", r.status, r.raw)
		}
		if got := int64(r.body["item"].(map[string]any)["modified_on"].(float64)); got <= since {
			t.Errorf("modified_on: got %d, want after %d", got, since)
		}
		// A since before the last change answers at once.
		if r := e.do("GET", waitPath(wf, id, "until=change&since=0"), admin, nil); r.status != 200 || int64(r.body["item"].(map[string]any)["modified_on"].(float64)) <= since {
			t.Errorf("since=0: got %d %s", r.status, r.raw)
		}
	})

	t.Run("the timeout answers the current item", func(t *testing.T) {
		id := start("PO-timeout")
		r := e.do("GET", waitPath(wf, id, "until=change&timeout=1"), admin, nil)
		if r.status != 200 || r.body["item"].(map[string]any)["status"] != "WAITING" {
			t.Errorf("got %d %s, want 200 WAITING", r.status, r.raw)
		}
	})

	t.Run("strict query", func(t *testing.T) {
		id := start("PO-strict")
		for _, c := range []struct{ query, want string }{
			{"timeout=26", "timeout must be a number of seconds, a whole number from 0 to 25"},
			{"timeout=-1", "timeout must be"},
			{"timeout=1.5", "timeout must be"},
			{"timeout=", "timeout must be"},
			{"timeout=01", "timeout must be"},
			{"until=end", `until must be final or change, got "end"`},
			{"until=", "until must be final or change"},
			{"since=yesterday", "since must be a modified_on"},
			{"since=1234567890123456789", "since must be a modified_on"},
			{"wait=5", `unknown query parameter "wait"`},
			{"timeout=1&timeout=2", "timeout is given 2 times"},
		} {
			r := e.do("GET", waitPath(wf, id, c.query), admin, nil)
			if r.status != 400 || r.code() != "VALIDATION_ERROR" || !strings.Contains(r.msg(), c.want) {
				t.Errorf("%s: got %d %s, want 400 saying %q", c.query, r.status, r.raw, c.want)
			}
		}
		for _, query := range []string{"workflow_execution_id=" + id, "workflow_id=" + wf} {
			if r := e.do("GET", "/v1/workflows/waitForExecution?"+query, admin, nil); r.status != 400 || !strings.Contains(r.msg(), "is required") {
				t.Errorf("%s: got %d %s, want 400 naming the missing parameter", query, r.status, r.raw)
			}
		}
	})
}

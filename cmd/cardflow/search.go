package main

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// searchFlags are the filters of `cardflow executions` that only
// searchExecutions answers.
type searchFlags struct {
	status, processID, trigger, after, before *string
}

func addSearchFlags(c *command) searchFlags {
	return searchFlags{
		status:    c.String("status", "", "only executions with this status (RUNNING, WAITING, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT)"),
		processID: c.String("process-id", "", "only executions started with this process id"),
		trigger:   c.String("trigger-type", "", "only executions started this way (REQUEST, SCHEDULE)"),
		after:     c.String("created-after", "", "only executions created at or after this time: RFC 3339, a date (UTC) or epoch milliseconds"),
		before:    c.String("created-before", "", "only executions created before this time, written as --created-after"),
	}
}

// searchPath returns the searchExecutions request of the flags, with the
// workflow and page size; ok is false when no flag of a search is set,
// so the plain lists answer.
func (f searchFlags) searchPath(workflow string, limit int) (path string, ok bool, err error) {
	q := url.Values{}
	for name, v := range map[string]string{"status": *f.status, "process_id": *f.processID, "trigger_type": *f.trigger} {
		if v != "" {
			q.Set(name, v)
		}
	}
	for name, v := range map[string]string{"created_after": *f.after, "created_before": *f.before} {
		if v == "" {
			continue
		}
		ms, err := epochMillis(v)
		if err != nil {
			return "", false, fmt.Errorf("--%s: %w", map[string]string{"created_after": "created-after", "created_before": "created-before"}[name], err)
		}
		q.Set(name, strconv.FormatInt(ms, 10))
	}
	if len(q) == 0 {
		return "", false, nil
	}
	if workflow != "" {
		q.Set("workflow_id", workflow)
	}
	q.Set("limit", strconv.Itoa(limit))
	return "/v1/workflows/searchExecutions?" + q.Encode(), true, nil
}

// epochMillis reads a time as RFC 3339, a date (midnight UTC) or epoch
// milliseconds.
func epochMillis(v string) (int64, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UnixMilli(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.UnixMilli(), nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 {
		return ms, nil
	}
	return 0, fmt.Errorf("%q is not a time: write 2026-11-26T18:00:00Z, 2026-11-26 or epoch milliseconds", v)
}

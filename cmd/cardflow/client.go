package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cardflow/cardflow/pkg/localmode"
)

// apiClient calls a running service's HTTP API.
type apiClient struct {
	base, key string
	http      *http.Client
}

// clientFlags adds the flags every API command shares and returns the
// client they configure.
func clientFlags(c *command) func() (*apiClient, error) {
	dataDir := c.dataDir()
	base := c.String("url", envOr("CARDFLOW_URL", "http://localhost:"+envOr("PORT", "3000")), "base URL of the service; env CARDFLOW_URL")
	// The default stays empty so that the help never shows the key.
	key := c.String("key", "", "API key (default: env CARDFLOW_API_KEY, else the demo key in the data directory)")
	return func() (*apiClient, error) {
		k := *key
		if k == "" {
			k = os.Getenv("CARDFLOW_API_KEY")
		}
		if k == "" {
			path := filepath.Join(*dataDir, localmode.DemoKeyFile)
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("no API key: pass --key or set CARDFLOW_API_KEY; without one the demo key is read from %s, which does not exist: point --data-dir (or CARDFLOW_DATA_DIR) at the data directory of `make run`", path)
			}
			if err != nil {
				return nil, fmt.Errorf("no API key: pass --key or set CARDFLOW_API_KEY; the demo key could not be read: %w", err)
			}
			k = strings.TrimSpace(string(b))
		}
		return &apiClient{base: strings.TrimRight(*base, "/"), key: k, http: &http.Client{Timeout: 30 * time.Second}}, nil
	}
}

// call sends a request and decodes the JSON answer into out. An error answer
// becomes an error with the service's message.
func (c *apiClient) call(ctx context.Context, method, path string, body []byte, header http.Header, out any) error {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("x-api-key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("is the service running? %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct{ Message, Code string }
		if json.Unmarshal(raw, &e) == nil && e.Message != "" {
			return fmt.Errorf("%s (%d %s)", e.Message, resp.StatusCode, e.Code)
		}
		return fmt.Errorf("%s: %s", resp.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// jsonArg reads a --data value: inline JSON, or @file.
func jsonArg(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b := []byte(s)
	if strings.HasPrefix(s, "@") {
		var err error
		if b, err = os.ReadFile(s[1:]); err != nil {
			return nil, err
		}
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("--data is not valid JSON")
	}
	return b, nil
}

// setup parses the arguments, wanting n positional ones, and returns them
// with the client and the --data body (nil when data is nil or empty).
func setup(c *command, client func() (*apiClient, error), args []string, n int, data *string) ([]string, *apiClient, []byte, error) {
	pos, err := c.parse(args, n)
	if err != nil {
		return nil, nil, nil, err
	}
	api, err := client()
	if err != nil {
		return nil, nil, nil, err
	}
	var body []byte
	if data != nil {
		if body, err = jsonArg(*data); err != nil {
			return nil, nil, nil, err
		}
	}
	return pos, api, body, nil
}

func trigger(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("trigger", "WORKFLOW_ID", `Starts an execution of a workflow on a running service and prints its
execution id. Without --version the latest ACTIVE version runs; --data is
the execution's input. --process-id names the execution for `+"`cardflow resume`"+`
(default: its execution id).
`, stdout)
	client := clientFlags(c)
	version := c.Int("version", 0, "version to run (default: the latest ACTIVE one)")
	pid := c.String("process-id", "", "process id that resumes the execution (default: its execution id)")
	idem := c.String("idempotency-key", "", "Idempotency-Key: the same key and data within 24 hours start nothing new")
	data := c.String("data", "", "input as JSON, or @file")
	pos, api, body, err := setup(c, client, args, 1, data)
	if err != nil {
		return err
	}
	path := "/v1/workflows/triggerworkflow/" + url.PathEscape(pos[0])
	if *version > 0 {
		path += "/" + strconv.Itoa(*version)
	}
	if *pid != "" {
		path += "?process_id=" + url.QueryEscape(*pid)
	}
	h := http.Header{}
	if *idem != "" {
		h.Set("Idempotency-Key", *idem)
	}
	var out struct {
		ServiceExecutionID string `json:"service_execution_id"`
	}
	if err := api.call(ctx, "POST", path, body, h, &out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out.ServiceExecutionID)
	return nil
}

func resume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("resume", "PROCESS_ID", `Answers the execution waiting on PROCESS_ID (a card or wait step) on a
running service: --data becomes the waiting step's output. An answer that
arrives before the execution reaches its wait is kept for it.
`, stdout)
	client := clientFlags(c)
	data := c.String("data", "", "the answer as a JSON object, or @file; it becomes the waiting step's output")
	pos, api, body, err := setup(c, client, args, 1, data)
	if err != nil {
		return err
	}
	var out struct {
		Message              string `json:"message"`
		ServiceExecutionID   string `json:"service_execution_id"`
		Status               string `json:"status"`
		WorkflowCurrentState string `json:"workflow_current_state"`
	}
	if err := api.call(ctx, "POST", "/v1/workflows/resumeworkflow/"+url.PathEscape(pos[0]), body, nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s in %q: %s\n", out.ServiceExecutionID, out.Status, out.WorkflowCurrentState, out.Message)
	return nil
}

type summary struct {
	WorkflowID           string `json:"workflow_id"`
	WorkflowExecutionID  string `json:"workflow_execution_id"`
	WorkflowVersion      int    `json:"workflow_version"`
	WorkflowCurrentState string `json:"workflow_current_state"`
	WorkflowTriggerType  string `json:"workflow_trigger_type"`
	Status               string `json:"status"`
	TriggeredBy          string `json:"triggered_by"`
	CreatedOn            int64  `json:"created_on"`
	WorkflowDetails      struct {
		WorkflowName string `json:"workflow_name"`
	} `json:"workflow_details"`
}

func executions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("executions", "", `Lists the executions of the organization on a running service, newest
first, or those of one workflow with --workflow. --status, --process-id,
--trigger-type, --created-after and --created-before search them
(searchExecutions), with --workflow too.
`, stdout)
	client := clientFlags(c)
	workflow := c.String("workflow", "", "only the executions of this workflow")
	limit := c.Int("limit", 20, "how many (at most 30)")
	search := addSearchFlags(c)
	_, api, _, err := setup(c, client, args, 0, nil)
	if err != nil {
		return err
	}
	path := "/v1/workflows/getOrganizationExecutions?limit=" + strconv.Itoa(*limit)
	if *workflow != "" {
		path = "/v1/workflows/getWorkflowExecutionHistory?limit=" + strconv.Itoa(*limit) + "&workflow_id=" + url.QueryEscape(*workflow)
	}
	if p, ok, err := search.searchPath(*workflow, *limit); err != nil {
		return err
	} else if ok {
		path = p
	}
	var out struct{ Items []summary }
	if err := api.call(ctx, "GET", path, nil, nil, &out); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXECUTION\tWORKFLOW\tVERSION\tSTATUS\tSTEP\tTRIGGER\tTRIGGERED_BY\tSTARTED")
	for _, e := range out.Items {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", e.WorkflowExecutionID, e.WorkflowDetails.WorkflowName, e.WorkflowVersion,
			e.Status, e.WorkflowCurrentState, e.WorkflowTriggerType, e.TriggeredBy, time.UnixMilli(e.CreatedOn).Format(time.DateTime))
	}
	return tw.Flush()
}

// watch prints an execution's events as they happen, until it finishes.
// Each request waits on the service for the next change (waitForExecution),
// so a change shows as soon as it is stored, and no request is wasted.
func watch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("watch", "WORKFLOW_ID EXECUTION_ID", `Prints an execution's events as they happen on a running service, until
the execution ends; then its final status. It waits on the service for each
change (waitForExecution), so a step shows as soon as the service stores it.
`, stdout)
	client := clientFlags(c)
	pos, api, _, err := setup(c, client, args, 2, nil)
	if err != nil {
		return err
	}
	base := "/v1/workflows/waitForExecution?until=change&workflow_id=" + url.QueryEscape(pos[0]) + "&workflow_execution_id=" + url.QueryEscape(pos[1])
	// The first request answers at once with the execution as it is.
	path := base + "&timeout=0"
	seen := 0
	for {
		var out struct {
			Item struct {
				Status           string `json:"status"`
				ModifiedOn       int64  `json:"modified_on"`
				WorkflowEventLog struct {
					Events []struct {
						At      int64  `json:"at"`
						Type    string `json:"type"`
						StepID  string `json:"step_id"`
						Step    string `json:"step"`
						Message string `json:"message"`
					} `json:"events"`
					Total int `json:"total"`
				} `json:"workflow_event_log"`
			} `json:"item"`
		}
		if err := api.call(ctx, "GET", path, nil, nil, &out); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted
			}
			return err
		}
		log := out.Item.WorkflowEventLog
		// The log keeps its last events; Total tells which are new.
		first := len(log.Events) - (log.Total - seen)
		for _, e := range log.Events[max(first, 0):] {
			line := time.UnixMilli(e.At).Format("15:04:05.000") + "  " + e.Type
			if e.Step != "" {
				line += "  " + e.Step + " (" + e.StepID + ")"
			}
			if e.Message != "" {
				line += "  " + e.Message
			}
			fmt.Fprintln(stdout, line)
		}
		seen = log.Total
		if out.Item.Status != "RUNNING" && out.Item.Status != "WAITING" {
			fmt.Fprintln(stdout, out.Item.Status)
			return nil
		}
		// Then each waits up to 25 s for the next change.
		path = base + "&timeout=25&since=" + strconv.FormatInt(out.Item.ModifiedOn, 10)
	}
}

func outbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("outbox", "", `Lists the cards that card steps sent on a running local service (which
keeps them in an outbox instead of sending them to Teams), newest first,
with the process id that answers each, and for an approval's card its id
and the approver the copy is for. No copy carries a personal link: an
admin gets an approver's links with `+"`cardflow links`"+`.
`, stdout)
	client := clientFlags(c)
	limit := c.Int("limit", 10, "how many (at most 30)")
	_, api, _, err := setup(c, client, args, 0, nil)
	if err != nil {
		return err
	}
	var out struct {
		Items []struct {
			ProcessID   string          `json:"process_id"`
			ExecutionID string          `json:"workflow_execution_id"`
			StepID      string          `json:"step_id"`
			CardID      string          `json:"card_id"`
			CardVersion int             `json:"card_version"`
			Data        json.RawMessage `json:"data"`
			CreatedOn   int64           `json:"created_on"`
			Channel     string          `json:"channel"`
			Recipient   string          `json:"recipient"`
			Status      string          `json:"status"`
			ApprovalID  string          `json:"approval_id"`
		}
	}
	if err := api.call(ctx, "GET", "/v1/adaptive-cards/outbox?limit="+strconv.Itoa(*limit), nil, nil, &out); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SENT\tCHANNEL\tRECIPIENT\tSTATUS\tAPPROVAL\tPROCESS_ID\tEXECUTION\tSTEP\tCARD\tDATA")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, d := range out.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s v%d\t%s\n", time.UnixMilli(d.CreatedOn).Format(time.DateTime), d.Channel, dash(d.Recipient), d.Status, dash(d.ApprovalID),
			d.ProcessID, d.ExecutionID, d.StepID, d.CardID, d.CardVersion, d.Data)
	}
	return tw.Flush()
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

func redrive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("redrive", "WORKFLOW_ID EXECUTION_ID", `Continues a FAILED or TIMED_OUT execution on a running service from the
step it failed in, with the same execution id and the outputs of the steps
before it; `+"`cardflow watch`"+` follows it on. Any other execution is refused.
`, stdout)
	client := clientFlags(c)
	pos, api, _, err := setup(c, client, args, 2, nil)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"workflow_id": pos[0], "workflow_execution_id": pos[1]})
	if err != nil {
		return err
	}
	var out struct {
		Item struct {
			WorkflowExecutionID  string `json:"workflow_execution_id"`
			Status               string `json:"status"`
			WorkflowCurrentState string `json:"workflow_current_state"`
		} `json:"item"`
	}
	if err := api.call(ctx, "POST", "/v1/workflows/redriveExecution", body, nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s in %q\n", out.Item.WorkflowExecutionID, out.Item.Status, out.Item.WorkflowCurrentState)
	return nil
}

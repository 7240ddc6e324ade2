package dynamostore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// benchWorkflow is a workflow version of the size the samples have.
func benchWorkflow(org, id string) *cardflow.Workflow {
	return &cardflow.Workflow{
		OrganizationID: org,
		WorkflowID:     id,
		WorkflowName:   "purchase approval",
		WorkflowSteps: []cardflow.Step{
			{ID: "lookup", Name: "Look up order", Type: "erp", Config: map[string]any{"entity": "PurchaseOrder"}},
			{ID: "approve", Name: "Ask approver", Type: "card", Config: map[string]any{"timeout": "48h"}},
			{ID: "end", Name: "Done", Type: "end"},
		},
		WorkflowConnections: []cardflow.Connection{{From: "lookup", To: "approve"}, {From: "approve", To: "end"}},
		WorkflowSchema:      map[string]any{"type": "object", "required": []any{"order_id"}},
	}
}

// warmUp runs op for a while before the measurement: DynamoDB Local runs on
// the JVM, which answers several times slower until it has compiled its hot
// paths, and that start-up is not what the benchmark is after.
func warmUp(b *testing.B, op func() error) {
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
}

// reportRequests adds the DynamoDB requests per operation to the result.
func reportRequests(b *testing.B, c *requestCounter) {
	n := 0
	for _, v := range c.take() {
		n += v
	}
	b.ReportMetric(float64(n)/float64(b.N), "requests/op")
}

// BenchmarkGetWorkflow is the store's share of getWorkflowById: one
// consistent GetItem, over loopback to DynamoDB Local.
func BenchmarkGetWorkflow(b *testing.B) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(b, counter.clientOption)
	org := "org-" + cardflow.NewID(time.Now())
	w := benchWorkflow(org, "")
	if err := s.SaveWorkflowVersion(b.Context(), w); err != nil {
		b.Fatal(err)
	}
	get := func() error { _, err := s.GetWorkflow(b.Context(), org, w.WorkflowID, 1); return err }
	warmUp(b, get)
	counter.take()
	for b.Loop() {
		if err := get(); err != nil {
			b.Fatal(err)
		}
	}
	reportRequests(b, counter)
}

// BenchmarkListWorkflowsPage is the store's share of a full
// getOrganizationWorkflows page of 20 versions, with more to come.
func BenchmarkListWorkflowsPage(b *testing.B) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(b, counter.clientOption)
	org := "org-" + cardflow.NewID(time.Now())
	w := benchWorkflow(org, "")
	if err := s.SaveWorkflowVersion(b.Context(), w); err != nil {
		b.Fatal(err)
	}
	for range 24 {
		if err := s.SaveWorkflowVersion(b.Context(), benchWorkflow(org, w.WorkflowID)); err != nil {
			b.Fatal(err)
		}
	}
	list := func() error {
		page, err := s.ListWorkflows(b.Context(), org, cardflow.ListOptions[cardflow.WorkflowKey]{Limit: cardflow.DefaultLimit})
		if err == nil && (len(page.Items) != cardflow.DefaultLimit || page.LastKey == nil) {
			err = fmt.Errorf("got %d items, LastKey %v; want a full page with more to come", len(page.Items), page.LastKey)
		}
		return err
	}
	warmUp(b, list)
	counter.take()
	for b.Loop() {
		if err := list(); err != nil {
			b.Fatal(err)
		}
	}
	reportRequests(b, counter)
}

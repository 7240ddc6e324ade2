package sample

import (
	"strconv"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

type obj = map[string]any

func step(id, name, typ string, cfg obj) cardflow.Step {
	return cardflow.Step{ID: id, Name: name, Type: typ, Config: cfg}
}

// approvalWorkflow asks a manager to approve purchases above threshold.
func approvalWorkflow(cardID string, threshold int) app.SaveWorkflowInput {
	return app.SaveWorkflowInput{
		WorkflowName: "Purchase request approval",
		WorkflowSteps: []cardflow.Step{
			step("start", "Request received", "trigger", obj{"kind": "REQUEST"}),
			step("check", "Amount check", "condition", obj{}),
			step("approve", "Manager approval", "card", obj{
				"card_id": cardID,
				"data":    obj{"requester": "{{ input.requester }}", "item": "{{ input.item }}", "amount": "{{ input.amount }}"},
				"timeout": "PT72H",
			}),
			step("done", "Approved", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}),
			step("auto", "Auto-approved", "end", obj{"status": "SUCCEEDED"}),
			step("expired", "No answer", "end", obj{"status": "FAILED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			{From: "start", To: "check"},
			{From: "check", To: "approve", When: "input.amount > " + strconv.Itoa(threshold)},
			{From: "check", To: "auto"},
			{From: "approve", To: "done"},
			{From: "approve", To: "expired", On: "timeout"},
		},
		WorkflowSchema: obj{"type": "object", "required": []any{"amount"}},
	}
}

// twoApproverWorkflow asks every approver to approve a purchase; one who
// is away can hand their part on to a colleague (allow_reassign).
func twoApproverWorkflow(cardID string, approvers []string) app.SaveWorkflowInput {
	list := make([]any, len(approvers))
	for i, a := range approvers {
		list[i] = a
	}
	return app.SaveWorkflowInput{
		WorkflowName: "Two-approver purchase",
		WorkflowSteps: []cardflow.Step{
			step("start", "Request received", "trigger", obj{"kind": "REQUEST"}),
			step("approve", "Two approvals", cardflow.StepApproval, obj{
				"card_id":   cardID,
				"data":      obj{"requester": "{{ input.requester }}", "item": "{{ input.item }}", "amount": "{{ input.amount }}"},
				"approvers": list, "policy": cardflow.PolicyAll, "allow_reassign": true, "timeout": "PT72H",
			}),
			step("done", "Approved", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}),
			step("rejected", "Rejected", "end", obj{"status": "FAILED", "output": "{{ steps.approve.output }}"}),
			step("expired", "No decision", "end", obj{"status": "FAILED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			{From: "start", To: "approve"},
			{From: "approve", To: "done"},
			{From: "approve", To: "rejected", On: cardflow.ExitRejected},
			{From: "approve", To: "expired", On: cardflow.ExitTimeout},
		},
	}
}

// scheduledWorkflow pulls overdue invoices from SAP on weekday mornings.
func scheduledWorkflow(expression string) app.SaveWorkflowInput {
	return app.SaveWorkflowInput{
		WorkflowName: "Overdue invoice digest",
		WorkflowIntegrations: obj{"erp": obj{
			"type": "SAP", "base_url": "https://sap.example.com", "client": "100",
			"auth": obj{"type": "basic", "secret": "sap-prod"},
		}},
		WorkflowSteps: []cardflow.Step{
			step("start", "Every weekday morning", "trigger", obj{"kind": "SCHEDULE", "expression": expression, "timezone": "Europe/Berlin"}),
			step("fetch", "Fetch overdue invoices", "erp", obj{
				"service": "/sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV",
				"entity":  "A_SupplierInvoice",
				"query":   obj{"$filter": "PaymentBlockingReason ne ''", "$top": "50"},
			}),
			step("digest", "Build digest", "transform", obj{"output": "{{ steps.fetch.output }}"}),
			step("done", "Digest ready", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.digest.output }}"}),
			step("failed", "SAP unreachable", "end", obj{"status": "FAILED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			{From: "start", To: "fetch"},
			{From: "fetch", To: "digest"},
			{From: "fetch", To: "failed", On: "error"},
			{From: "digest", To: "done"},
		},
	}
}

// onboardingWorkflow waits for SAP to confirm a new vendor, then informs
// the requester.
func onboardingWorkflow(cardID string) app.SaveWorkflowInput {
	return app.SaveWorkflowInput{
		WorkflowName: "Vendor onboarding",
		WorkflowSteps: []cardflow.Step{
			step("start", "Vendor requested", "trigger", obj{"kind": "REQUEST"}),
			step("review", "Procurement review", "card", obj{"card_id": cardID, "data": obj{"vendor": "{{ input.vendor }}"}}),
			step("sap", "Wait for SAP vendor record", "wait", obj{"timeout": "P5D"}),
			step("pause", "Cool-down", "delay", obj{"duration": "PT5M"}),
			step("done", "Vendor created", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.sap.output }}"}),
			step("late", "SAP did not answer", "end", obj{"status": "FAILED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			{From: "start", To: "review"},
			{From: "review", To: "sap"},
			{From: "sap", To: "pause"},
			{From: "sap", To: "late", On: "timeout"},
			{From: "pause", To: "done"},
		},
	}
}

func approvalCardPayload(title string) obj {
	return obj{
		"type":    "AdaptiveCard",
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"version": "1.5",
		"msteams": obj{"width": "Full"},
		"body": []any{
			obj{"type": "TextBlock", "text": title, "size": "Large", "weight": "Bolder", "wrap": true},
			obj{"type": "FactSet", "facts": []any{
				obj{"title": "Requester", "value": "${requester}"},
				obj{"title": "Item", "value": "${item}"},
				obj{"title": "Amount", "value": "${amount} EUR"},
			}},
			obj{"type": "Input.Text", "id": "comment", "label": "Comment", "isMultiline": true, "placeholder": "Optional"},
		},
		"actions": []any{
			obj{"type": "Action.Submit", "title": "Approve", "style": "positive", "data": obj{"decision": "approve"}},
			obj{"type": "Action.Submit", "title": "Reject", "style": "destructive", "data": obj{"decision": "reject"}},
		},
	}
}

func invoiceCardPayload() obj {
	return obj{
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body": []any{
			obj{"type": "TextBlock", "text": "Invoice ${invoice} is blocked", "weight": "Bolder", "wrap": true},
			obj{"type": "ColumnSet", "columns": []any{
				obj{"type": "Column", "width": "auto", "items": []any{obj{"type": "TextBlock", "text": "Vendor"}}},
				obj{"type": "Column", "width": "stretch", "items": []any{obj{"type": "TextBlock", "text": "${vendor}", "wrap": true}}},
			}},
			obj{"type": "Input.ChoiceSet", "id": "action", "label": "What now?", "value": "release", "choices": []any{
				obj{"title": "Release payment", "value": "release"},
				obj{"title": "Keep blocked", "value": "keep"},
			}},
		},
		"actions": []any{obj{"type": "Action.Submit", "title": "Send"}},
	}
}

func onboardingCardPayload(withLink bool) obj {
	actions := []any{obj{"type": "Action.Submit", "title": "Looks good", "data": obj{"decision": "ok"}}}
	if withLink {
		actions = append(actions, obj{"type": "Action.OpenUrl", "title": "Open vendor file", "url": "https://example.com/vendors"})
	}
	return obj{
		"type":    "AdaptiveCard",
		"version": "1.5",
		"body": []any{
			obj{"type": "TextBlock", "text": "New vendor: ${vendor}", "weight": "Bolder", "wrap": true},
			obj{"type": "Input.Toggle", "id": "checked", "title": "Tax documents checked", "value": "false"},
		},
		"actions": actions,
	}
}

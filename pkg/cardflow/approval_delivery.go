package cardflow

import "time"

// ChannelLink is the channel of an answer through an approver's personal
// response link.
const ChannelLink = "link"

// Recipients is who should hold a copy of the approval's card now: every
// listed approver, or under PolicySequential the one whose turn it is.
// A decided approval has none.
func (a *Approval) Recipients() []string {
	if !a.Open() {
		return nil
	}
	if a.Policy == PolicySequential {
		if n := len(a.Answers); n < len(a.Approvers) {
			return []string{a.Approvers[n]}
		}
		return nil
	}
	return a.Approvers
}

// DeliveryFor is approver's copy of the approval's card.
func (a *Approval) DeliveryFor(approver string, now time.Time) *Delivery {
	return &Delivery{
		DeliveryID: NewID(now), OrganizationID: a.OrganizationID, WorkflowID: a.WorkflowID, ExecutionID: a.ExecutionID,
		StepID: a.StepID, ProcessID: a.ProcessID, CardID: a.CardID, CardVersion: a.CardVersion, CardPayload: a.CardPayload,
		Data: a.Data, CreatedOn: now.UnixMilli(), Wait: a.Wait, Teams: a.Teams,
		ApprovalID: a.ApprovalID, Approvers: a.Approvers, Approver: approver,
	}
}

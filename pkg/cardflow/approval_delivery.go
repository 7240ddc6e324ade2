package cardflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChannelLink is the channel of an answer through an approver's personal
// response link.
const ChannelLink = "link"

// EventApprovalLinksIssued: an admin was given an approver's personal
// links to the approval's card (local testing; see IssueApprovalLinks in
// pkg/app).
const EventApprovalLinksIssued = "ApprovalLinksIssued"

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
		ApprovalID: a.ApprovalID, Approvers: a.Approvers, Approver: approver, RequestedBy: a.TriggeredBy,
	}
}

// BotPost is a bot message that carries a copy of a card.
type BotPost struct {
	ServiceURL     string `json:"service_url"`
	ConversationID string `json:"conversation_id"`
	TenantID       string `json:"tenant_id,omitempty"`
	ActivityID     string `json:"activity_id"`
	// Approver is who the copy is for.
	Approver string `json:"approver,omitempty"`
}

// CardPoster is a Deliverer that says where it posted a card as a bot
// message (nil when it posted none), so the card can be updated later.
type CardPoster interface {
	DeliverPosted(ctx context.Context, d *Delivery) (*BotPost, error)
}

// ApprovalAnnouncer tells a shared chat or channel, once, that an approval
// opened: its card without buttons. The approvers' copies go their own
// way (DeliverApproval).
type ApprovalAnnouncer interface {
	AnnounceApproval(ctx context.Context, a *Approval) error
}

// ApprovalCardUpdater brings every posted copy of a finished approval's
// card up to date: the decision, the timeout or the override, and no
// buttons.
type ApprovalCardUpdater interface {
	UpdateApprovalCards(ctx context.Context, a *Approval) error
}

// DeliverApproval sends approver's copy of the approval's card, with
// notice saying why it goes out again ("" the first time), and records
// that approver has it and where a bot posted it.
func DeliverApproval(ctx context.Context, store ApprovalStore, d Deliverer, a *Approval, approver, notice string, now time.Time) error {
	dl := a.DeliveryFor(approver, now)
	dl.Notice = notice
	var post *BotPost
	if p, ok := d.(CardPoster); ok {
		var err error
		if post, err = p.DeliverPosted(ctx, dl); err != nil {
			return err
		}
	} else if err := d.Deliver(ctx, dl); err != nil {
		return err
	}
	if post != nil {
		post.Approver = approver
	}
	return recordDelivery(ctx, store, a, approver, post)
}

// recordDelivery adds approver to those who have the card and post, when
// there is one, to the stored approval, which answers may be changing
// meanwhile, and to a.
func recordDelivery(ctx context.Context, store ApprovalStore, a *Approval, approver string, post *BotPost) error {
	if post == nil && containsID(a.Sent, approver) {
		return nil
	}
	for {
		cur, err := store.GetApproval(ctx, a.OrganizationID, a.ApprovalID)
		if err != nil {
			return err
		}
		changed := false
		if !containsID(cur.Sent, approver) {
			cur.Sent, changed = append(cur.Sent, approver), true
		}
		if post != nil && !slices.ContainsFunc(cur.Posts, func(p BotPost) bool {
			return p.ActivityID == post.ActivityID && p.ConversationID == post.ConversationID
		}) {
			cur.Posts, changed = append(cur.Posts, *post), true
		}
		if !changed {
			return nil
		}
		err = store.PutApproval(ctx, cur)
		if ErrorCode(err) == ECONFLICT {
			continue
		}
		if err == nil {
			a.Sent, a.Posts = cur.Sent, cur.Posts
		}
		return err
	}
}

// EndNote says how a finished approval ended, for the cards and pages a
// late click finds.
func (a *Approval) EndNote() string {
	when := time.UnixMilli(a.DecidedOn).UTC().Format("2 Jan 2006 15:04 MST")
	switch a.Status {
	case ApprovalApproved, ApprovalRejected:
		return fmt.Sprintf("This approval was %s on %s; nothing more can be recorded.", strings.ToLower(a.Status), when)
	case ApprovalTimedOut:
		return fmt.Sprintf("This approval timed out on %s before it was decided; nothing more can be recorded.", when)
	case ApprovalCancelled:
		return fmt.Sprintf("This approval was cancelled on %s: its execution ended before it was decided; nothing more can be recorded.", when)
	case ApprovalOverridden:
		if o := a.Override; o != nil {
			return fmt.Sprintf("This approval was overridden by %s on %s (%sd without the approvers: %s); nothing more can be recorded.", o.Actor, when, o.Decision, o.Reason)
		}
		return fmt.Sprintf("This approval was resumed through resumeworkflow on %s without a decision; nothing more can be recorded.", when)
	}
	return "This approval is open."
}

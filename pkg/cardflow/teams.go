package cardflow

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Ways a card step's card reaches its approver: workflow_integrations.teams
// gives the workflow's default, a card step's config.delivery overrides it
// key by key.
const (
	// DeliveryOutbox keeps the card in the service (local mode's outbox).
	// It is the default when neither the workflow nor the step names one.
	DeliveryOutbox = "outbox"
	// DeliveryWebhook posts the card to a Teams Workflows webhook; its
	// buttons become signed response links.
	DeliveryWebhook = "webhook"
	// DeliveryBot sends the card as the deployment's bot into a stored
	// conversation; its buttons answer through the bot.
	DeliveryBot = "bot"
)

// teamsKeys are the keys a Teams profile may hold.
var teamsKeys = []string{"type", "webhook_secret", "approver_webhooks", "service_url", "conversation_id", "tenant_id"}

var secretNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)

// TeamsProfile returns the delivery a card step uses: the workflow's
// workflow_integrations.teams with the step's config.delivery laid over it.
// Its "type" is DeliveryOutbox when nothing names another.
func TeamsProfile(integrations, delivery map[string]any) map[string]any {
	out := map[string]any{"type": DeliveryOutbox}
	base, _ := integrations["teams"].(map[string]any)
	for _, m := range []map[string]any{base, delivery} {
		for k, v := range m {
			if v != nil {
				out[k] = v
			}
		}
	}
	return out
}

// validateTeams checks workflow_integrations.teams and the delivery of
// every step whose kind delivers cards (traits by step id), so a webhook
// without its secret or a bot without its conversation fails when the
// workflow is saved.
func (w *Workflow) validateTeams(traits map[string]StepTraits) error {
	if v, ok := w.WorkflowIntegrations["teams"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return Errorf(EINVALID, "workflow_integrations.teams must be an object such as {\"type\": \"webhook\", \"webhook_secret\": \"<secret name>\"}")
		}
		if err := checkTeamsKeys(m); err != nil {
			return Errorf(EINVALID, "workflow_integrations.teams: %v", err)
		}
	}
	for i, s := range w.WorkflowSteps {
		where := fmt.Sprintf("workflow_steps[%d] (id %q)", i, s.ID)
		delivers := traits[s.ID].Delivers
		v, ok := s.Config["delivery"]
		var delivery map[string]any
		if ok && v != nil {
			if !delivers {
				return Errorf(EINVALID, "%s: config.delivery applies to card steps only", where)
			}
			if delivery, ok = v.(map[string]any); !ok {
				return Errorf(EINVALID, "%s: config.delivery must be an object such as {\"type\": \"bot\", \"conversation_id\": \"...\"}", where)
			}
			if err := checkTeamsKeys(delivery); err != nil {
				return Errorf(EINVALID, "%s: config.delivery: %v", where, err)
			}
		}
		if !delivers {
			continue
		}
		profile := TeamsProfile(w.WorkflowIntegrations, delivery)
		if err := checkTeamsProfile(profile, traits[s.ID].PersonalCopies); err != nil {
			return Errorf(EINVALID, "%s: its delivery (workflow_integrations.teams with config.delivery over it) %v", where, err)
		}
		if traits[s.ID].PersonalCopies {
			// Approvers given by a template are known when the step opens,
			// where the step checks them the same way.
			var listed []string
			var list []any
			switch v := s.Config["approvers"].(type) {
			case []any:
				list = v
			case []string:
				for _, p := range v {
					list = append(list, p)
				}
			}
			for _, v := range list {
				if p, ok := v.(string); ok && !strings.Contains(p, "{{") {
					listed = append(listed, strings.TrimSpace(p))
				}
			}
			if err := CheckApproverTargets(profile, listed); err != nil {
				return Errorf(EINVALID, "%s: %s", where, ErrorMessage(err))
			}
		}
	}
	return nil
}

// checkTeamsKeys checks the keys and value types of one profile object.
func checkTeamsKeys(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(teamsKeys, k) {
			return fmt.Errorf("unknown key %q; a Teams profile has %s", k, strings.Join(teamsKeys, ", "))
		}
		if k == "approver_webhooks" {
			if err := checkApproverWebhooks(m[k]); err != nil {
				return err
			}
			continue
		}
		if _, ok := m[k].(string); !ok && m[k] != nil {
			return fmt.Errorf("%s must be a string", k)
		}
	}
	if t, ok := m["type"].(string); ok && t != DeliveryOutbox && t != DeliveryWebhook && t != DeliveryBot {
		return fmt.Errorf("type must be outbox, webhook or bot, not %q", t)
	}
	return nil
}

// checkTeamsProfile checks that an effective profile names what its type
// needs. A step with personal copies (an approval) may do without a shared
// webhook_secret: its copies go to approver_webhooks.
func checkTeamsProfile(p map[string]any, personal bool) error {
	get := func(k string) string { s, _ := p[k].(string); return strings.TrimSpace(s) }
	switch get("type") {
	case DeliveryWebhook:
		name := get("webhook_secret")
		if name == "" && personal && p["approver_webhooks"] != nil {
			return nil
		}
		if name == "" {
			return fmt.Errorf("is a webhook without webhook_secret, the name of the secret holding the webhook URL")
		}
		if !secretNamePattern.MatchString(name) {
			return fmt.Errorf("has webhook_secret %q, which is not a secret name (letters, digits, . _ / -)", name)
		}
	case DeliveryBot:
		u, err := url.Parse(get("service_url"))
		if get("service_url") == "" || err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("is a bot delivery without an https service_url (the serviceUrl of the conversation, e.g. https://smba.trafficmanager.net/emea/)")
		}
		if get("conversation_id") == "" {
			return fmt.Errorf("is a bot delivery without conversation_id (the id of the chat or channel conversation the bot posts to)")
		}
	}
	return nil
}

// checkApproverWebhooks checks a profile's approver_webhooks: an object
// from each approver to the name of the secret holding the URL of a
// webhook that posts to that person's own chat.
func checkApproverWebhooks(v any) error {
	const want = `approver_webhooks must be an object from each approver to the name of the secret holding the URL of a webhook that posts to that person's own chat, such as {"ann@example.com": "ann-hook"}`
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s", want)
	}
	people := make([]string, 0, len(m))
	for p := range m {
		people = append(people, p)
	}
	sort.Strings(people)
	for i, p := range people {
		if !IsPerson(strings.TrimSpace(p)) {
			return fmt.Errorf("approver_webhooks names %q, which is neither an Entra ID object id nor a UPN or e-mail address", p)
		}
		for _, prev := range people[:i] {
			if strings.EqualFold(strings.TrimSpace(prev), strings.TrimSpace(p)) {
				return fmt.Errorf("approver_webhooks names %q twice (as %q and %q); people are compared in any case", p, prev, p)
			}
		}
		name, ok := m[p].(string)
		if !ok {
			return fmt.Errorf("%s", want)
		}
		if !secretNamePattern.MatchString(strings.TrimSpace(name)) {
			return fmt.Errorf("approver_webhooks[%q] is %q, which is not a secret name (letters, digits, . _ / -)", p, name)
		}
	}
	return nil
}

// ApproverWebhook is the secret naming the webhook that takes approver's
// copy of an approval's card under a webhook profile. The copy carries the
// approver's personal links, which answer as them, so it goes only to a
// webhook of their own (approver_webhooks), never to the shared
// webhook_secret: everyone in that chat or channel could use them (see
// docs/DECISIONS.md).
func ApproverWebhook(profile map[string]any, approver string) (string, error) {
	m, _ := profile["approver_webhooks"].(map[string]any)
	for p, v := range m {
		if name, ok := v.(string); ok && strings.EqualFold(strings.TrimSpace(p), strings.TrimSpace(approver)) && strings.TrimSpace(name) != "" {
			return strings.TrimSpace(name), nil
		}
	}
	return "", Errorf(EINVALID, "%s", missingWebhooks([]string{approver}))
}

// CheckApproverTargets checks that under a webhook profile each of
// approvers has a webhook of their own for their copy of an approval's
// card; other profiles need nothing more.
func CheckApproverTargets(profile map[string]any, approvers []string) error {
	if t, _ := profile["type"].(string); t != DeliveryWebhook {
		return nil
	}
	var missing []string
	for _, p := range approvers {
		if _, err := ApproverWebhook(profile, p); err != nil {
			missing = append(missing, p)
		}
	}
	m, _ := profile["approver_webhooks"].(map[string]any)
	if len(missing) == 0 && (len(m) > 0 || len(approvers) > 0) {
		return nil
	}
	return Errorf(EINVALID, "%s", missingWebhooks(missing))
}

// missingWebhooks says what to add for people without a webhook of their
// own.
func missingWebhooks(people []string) string {
	who := "each approver"
	if len(people) > 0 {
		who = strings.Join(people, ", ")
	}
	return fmt.Sprintf("an approval's copy carries its approver's personal response links, which answer as that approver, so it is not posted to a shared webhook; "+
		"no webhook of their own for %s: add approver_webhooks to the delivery, {\"<approver>\": \"<name of the secret holding the URL of a webhook that posts to that person's own chat>\"}", who)
}

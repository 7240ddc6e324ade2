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
var teamsKeys = []string{"type", "webhook_secret", "service_url", "conversation_id", "tenant_id"}

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
		if err := checkTeamsProfile(TeamsProfile(w.WorkflowIntegrations, delivery)); err != nil {
			return Errorf(EINVALID, "%s: its delivery (workflow_integrations.teams with config.delivery over it) %v", where, err)
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
// needs.
func checkTeamsProfile(p map[string]any) error {
	get := func(k string) string { s, _ := p[k].(string); return strings.TrimSpace(s) }
	switch get("type") {
	case DeliveryWebhook:
		name := get("webhook_secret")
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

package steps

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// DocumentSchema returns the JSON Schema (draft 2020-12) of an apply
// document: a card (kind: Card) or a workflow (kind: Workflow) as a file,
// with the fields of the saveCard or saveWorkflow body, and each step's
// config checked by its kind's schema. In a step that sends a card,
// card: <card name> may stand for card_id and card_version.
// schemas/cardflow.schema.json is this, written by go generate.
func (r *Registry) DocumentSchema() Schema {
	defs := map[string]Schema{
		"Card": object("A card: the body of saveCard, named.", []string{"kind", "name", "card_payload"}, map[string]Schema{
			"kind":         Schema{"const": "Card"},
			"name":         typed("string", "The card's name (card_name)."),
			"id":           typed("string", "The card's id; without it the card is found by name."),
			"card_payload": typed("object", "The Adaptive Card template."),
		}),
		"Workflow": object("A workflow: the body of saveWorkflow, named.", []string{"kind", "name", "workflow_steps"}, map[string]Schema{
			"kind":                 Schema{"const": "Workflow"},
			"name":                 typed("string", "The workflow's name (workflow_name)."),
			"id":                   typed("string", "The workflow's id; without it the workflow is found by name."),
			"workflow_steps":       list("The steps: exactly one trigger, and an end reachable from it.", Schema{"$ref": "#/$defs/Step"}),
			"workflow_connections": list("The connections between steps.", Schema{"$ref": "#/$defs/Connection"}),
			"workflow_integrations": Schema{"type": "object", "description": "Profiles the steps use: teams (how cards reach Teams), erp (the SAP profile).",
				"properties": Schema{"teams": teamsProfile("The workflow's Teams delivery; a step's config.delivery is laid over it key by key.")}},
			"workflow_schema": typed("object", "The JSON Schema of the trigger's input."),
		}),
		"Connection": object("An edge of the graph: the default one, or one taken when an expression holds (condition steps) or by a non-success exit.", []string{"from", "to"}, map[string]Schema{
			"from": typed("string", "The id of the step it leaves."),
			"to":   typed("string", "The id of the step it leads to."),
			"when": typed("string", "Leaving a condition step: the expression that takes it."),
			"on":   typed("string", "The non-success exit that takes it: error, timeout, or rejected for an approval."),
		}),
	}
	step := object("A step of the workflow.", []string{"id", "name", "type"}, map[string]Schema{
		"id":     Schema{"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,63}$", "description": "Unique in the workflow; connections name it."},
		"name":   typed("string", "What the step does, for people."),
		"type":   enum("The step kind.", r.Names()...),
		"config": typed("object", "The kind's config."),
	})
	var byKind []any
	for _, k := range r.kinds {
		config := k.Schema()
		if _, ok := config["properties"].(map[string]Schema)["card_id"]; ok {
			config = byCardName(config)
		}
		if k.traits.Delivers {
			config = maps.Clone(config)
			props := maps.Clone(config["properties"].(map[string]Schema))
			props["delivery"] = teamsProfile(props["delivery"]["description"].(string))
			config["properties"] = props
		}
		defs["config."+k.name] = config
		byKind = append(byKind, Schema{
			"if":   Schema{"properties": Schema{"type": Schema{"const": k.name}}, "required": []string{"type"}},
			"then": Schema{"properties": Schema{"config": Schema{"$ref": "#/$defs/config." + k.name}}},
		})
	}
	step["allOf"] = byKind
	defs["Step"] = step
	return Schema{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"title":       "cardflow apply document",
		"description": "A card (kind: Card) or a workflow (kind: Workflow) as a file. Generated from the step kinds of pkg/steps; do not edit.",
		"oneOf":       []any{Schema{"$ref": "#/$defs/Card"}, Schema{"$ref": "#/$defs/Workflow"}},
		"$defs":       defs,
	}
}

// teamsProfile is the schema of a Teams delivery profile, whose unknown
// keys saving refuses (cardflow's definition rules check it, in their
// words, so it is part of the document's schema only).
func teamsProfile(description string) Schema {
	return object(description, nil, map[string]Schema{
		"type":              enum("How the card reaches Teams (default outbox: kept in the service).", cardflow.DeliveryOutbox, cardflow.DeliveryWebhook, cardflow.DeliveryBot),
		"webhook_secret":    typed("string", "For webhook: the name of the secret holding the Teams Workflows webhook URL."),
		"approver_webhooks": Schema{"type": "object", "additionalProperties": typed("string", "A secret name."), "description": "For an approval's personal copies: each approver to the name of the secret holding their own webhook URL."},
		"service_url":       typed("string", "For bot: the https serviceUrl of the conversation."),
		"conversation_id":   typed("string", "For bot: the registered conversation the card goes to."),
		"tenant_id":         typed("string", "For bot: the Entra tenant of the conversation."),
	})
}

// byCardName lets the config of a step that sends a card name the card
// instead (card: <card name>); apply resolves it to card_id and
// card_version.
func byCardName(config Schema) Schema {
	out := maps.Clone(config)
	props := maps.Clone(config["properties"].(map[string]Schema))
	props["card"] = typed("string", "The name of a card applied with this file, instead of card_id and card_version.")
	out["properties"] = props
	var required []string
	for _, key := range config["required"].([]string) {
		if key != "card_id" {
			required = append(required, key)
		}
	}
	if len(required) > 0 {
		out["required"] = required
	} else {
		delete(out, "required")
	}
	out["oneOf"] = []any{
		Schema{"required": []string{"card_id"}, "not": Schema{"required": []string{"card"}}},
		Schema{"required": []string{"card"}, "not": Schema{"anyOf": []any{Schema{"required": []string{"card_id"}}, Schema{"required": []string{"card_version"}}}}},
	}
	return out
}

// DocumentSchemaJSON is DocumentSchema as schemas/cardflow.schema.json
// holds it: indented, keys sorted, ending in a newline.
func (r *Registry) DocumentSchemaJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.DocumentSchema()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

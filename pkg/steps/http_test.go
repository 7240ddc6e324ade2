package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestHTTPConfig(t *testing.T) {
	t.Parallel()
	call := func(extra obj) obj {
		c := obj{"method": "GET", "url": "https://api.example.com/orders/{{ input.id }}"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	testConfigs(t, steps.HTTP, []configCase{
		{name: "get", config: call(nil)},
		{name: "everything", config: call(obj{"method": "post", "query": obj{"q": "{{ input.q }}"}, "headers": obj{"X-Id": "{{ input.id }}"},
			"body": obj{"a": 1}, "timeout": "PT10S", "idempotency_key": false, "auth": obj{"type": "header", "header": "X-API-Key", "secret": "api-key"}})},
		{name: "no method", config: obj{"url": "https://x"}, want: "config.method is required for a http step"},
		{name: "method not a string", config: call(obj{"method": 5}), want: "config.method must be a string"},
		{name: "unknown method", config: call(obj{"method": "MERGE"}), want: `config.method "MERGE" is not one of GET, POST, PUT, PATCH, DELETE, HEAD`},
		{name: "no url", config: obj{"method": "GET"}, want: "config.url is required for a http step"},
		{name: "blank url", config: call(obj{"url": ""}), want: "config.url must not be empty"},
		{name: "headers not an object", config: call(obj{"headers": []any{"a"}}), want: "config.headers must be an object"},
		{name: "timeout not ISO 8601", config: call(obj{"timeout": "10s"}), want: `config.timeout: "10s" is not an ISO 8601 duration`},
		{name: "timeout at the cap", config: call(obj{"timeout": "PT2M"})},
		{name: "timeout over the cap", config: call(obj{"timeout": "PT2M1S"}), want: "config.timeout PT2M1S is longer than 2 minutes, the longest a call may wait"},
		{name: "timeout of hours", config: call(obj{"timeout": "PT1H"}), want: "config.timeout PT1H is longer than 2 minutes"},
		{name: "placeholder in the host", config: call(obj{"url": "https://{{ input.tenant }}.example.com:{{ input.port }}/orders"})},
		{name: "placeholder that is the url", config: call(obj{"url": " {{ input.callback_url }} "})},
		{name: "placeholder before the host", config: call(obj{"url": "{{ input.base }}/orders/{{ input.id }}"}),
			want: `config.url: a placeholder stands before "://"; write the URL's scheme and host, or make the whole url one placeholder`, by: checking},
		{name: "placeholder in the scheme", config: call(obj{"url": "http{{ input.s }}://api.example.com/"}), want: `config.url: a placeholder stands before "://"`, by: checking},
		{name: "idempotency_key not a bool", config: call(obj{"idempotency_key": "yes"}), want: "config.idempotency_key must be true or false"},
		{name: "auth not an object", config: call(obj{"auth": "Bearer x"}), want: `config.auth must be an object such as {"type": "bearer", "secret": "<secret name>"}`},
		{name: "password in auth", config: call(obj{"auth": obj{"type": "basic", "secret": "s", "password": "x"}}), want: "config.auth.password is not an auth field; use type, secret and header"},
		{name: "auth type not a string", config: call(obj{"auth": obj{"type": 1, "secret": "s"}}), want: "config.auth.type must be a string"},
		{name: "unknown auth type", config: call(obj{"auth": obj{"type": "digest", "secret": "s"}}), want: "config.auth.type must be basic, bearer or header, not digest", by: checking},
		{name: "no auth type", config: call(obj{"auth": obj{"secret": "s"}}), want: "config.auth.type must be basic, bearer or header", by: checking},
		{name: "secret value in auth", config: call(obj{"auth": obj{"type": "bearer", "secret": "eyJ hbGciOi"}}), want: "config.auth.secret must name a secret", by: checking},
		{name: "header of bearer", config: call(obj{"auth": obj{"type": "bearer", "secret": "s", "header": "X-Key"}}), want: "config.auth.header belongs to type header", by: checking},
		{name: "bad header name", config: call(obj{"auth": obj{"type": "header", "secret": "s", "header": "X Key"}}), want: "config.auth.header must name the header", by: checking},
		{name: "bad url template", config: call(obj{"url": "https://x/{{ input. }}"}), want: "config.url: ", by: checking},
		{name: "bad query template", config: call(obj{"query": obj{"q": "{{ inpt.q }}"}}), want: "config.query: ", by: checking},
		{name: "bad headers template", config: call(obj{"headers": obj{"A": "{{ 1 + }}"}}), want: "config.headers: ", by: checking},
		{name: "bad body template", config: call(obj{"body": "{{ input.a + }}"}), want: "config.body: ", by: checking},
	})
}

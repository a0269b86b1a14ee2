package tools

import "slices"

// agentAreas are the contract's tags whose operations are the product an agent works with: sending mailboxes,
// contacts and segments, suppressions, campaigns and their steps, runs, the unified inbox, analytics,
// webhooks, product events, app connections and the caller's own agent policy (and the areas still to ship,
// whose operations become tools the day they are implemented). Sign-in and accounts, organizations and
// members, API keys, OAuth and billing are not here: they manage who may act, which is people's business.
var agentAreas = []string{
	"agent policies", "analytics", "app connections", "automations", "campaigns", "contacts", "crm",
	"deliverability-ops", "forms", "mailboxes", "managed mailboxes", "meetings", "product events", "runs",
	"segments", "templates", "unibox", "webhooks",
}

// notTools are operations of those areas that are not tools, each for its reason.
var notTools = map[string]string{
	"mailboxes_oauth_cli_start":       "a mailbox OAuth consent needs a person in a browser",
	"mailboxes_oauth_session_get":     "a mailbox OAuth consent needs a person in a browser",
	"deliverability-ops_ingest_event": "delivery events are reported by providers and integrations, not agents",
	"agent_policies_list":             "agent policies are set by people",
	"agent_policies_create":           "agent policies are set by people",
	"agent_policies_update":           "agent policies are set by people",
	"agent_policies_delete":           "agent policies are set by people",
}

// earlierNames are the tools that shipped before tools were derived from the contract, under names other than
// their operation ids; they keep them (a tool name is public surface). They are tools whatever their area.
var earlierNames = map[string]string{
	"api-keys_list":             "api_keys_list",
	"api-keys_get":              "api_keys_get",
	"api-keys_list_permissions": "api_keys_permissions",
	"api-keys_usage_summary":    "api_keys_usage_summary",
	"analytics_audit_logs_list": "audit_logs_list",
	"organizations_list_teams":  "teams_list",
	"organizations_get_team":    "teams_get",
}

// Selected reports whether the operation op (of path item item) is a tool candidate and under which name.
// Public operations and those served outside /v1 never are. Whether the caller may call it, and whether it
// is implemented at all, is decided where the tools are registered (the route table and the handlers).
func Selected(op, item map[string]any) (name string, ok bool) {
	id := stringOf(op["operationId"])
	if security, set := op["security"]; set && len(sliceOf(security)) == 0 {
		return "", false
	}
	if op["servers"] != nil || item["servers"] != nil {
		return "", false
	}
	if earlier, ok := earlierNames[id]; ok {
		return earlier, true
	}
	if _, not := notTools[id]; not {
		return "", false
	}
	tags := stringsOf(op["tags"])
	if len(tags) == 0 || !slices.Contains(agentAreas, tags[0]) {
		return "", false
	}
	return id, true
}

package handlers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// toolSend is what the mailboxes_send and unibox_compose tools answer: the operation's result, wrapped as
// accepted when the operation answered 202.
type toolSend struct {
	// Status is "accepted" for a 202, "" for a final result.
	Status string
	Result sendResult
}

// sendResult is a direct send's or composed message's result.
type sendResult struct {
	Result      string    `json:"result"`
	TaskID      uuid.UUID `json:"task_id"`
	ApprovalID  uuid.UUID `json:"approval_id"`
	ApprovalURL string    `json:"approval_url"`
	Reasons     []string  `json:"reasons"`
}

// sendTool calls a sending tool over MCP and decodes its answer.
func sendTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) toolSend {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %v", name, res.Content)
	var answer map[string]json.RawMessage
	mcpResult(t, res, &answer)
	if string(answer["status"]) == `"accepted"` {
		var out toolSend
		require.NoError(t, json.Unmarshal(answer["result"], &out.Result))
		out.Status = "accepted"
		return out
	}
	// A final result is the operation's answer itself.
	var out toolSend
	mcpResult(t, res, &out.Result)
	return out
}

func TestMCPWriteToolsWaitForApprovalWithoutAPolicyAndExecuteUnderOne(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	agent, err := mcpConnect(t, r.env, r.agentKey.Secret)
	require.NoError(t, err)
	send := map[string]any{"id": r.box.ID.String(), "to": []string{"carol@client.example"}, "subject": "Hello Carol",
		"body_plain": "Hello there."}

	// Without a policy the agent's sends wait for a person; nothing is queued.
	held := sendTool(t, agent, "mailboxes_send", send)
	require.Equal(t, "accepted", held.Status)
	require.Equal(t, "awaiting_approval", held.Result.Result)
	require.Equal(t, []string{"The API key has no agent policy."}, held.Result.Reasons)
	require.Contains(t, held.Result.ApprovalURL, "/approvals/"+held.Result.ApprovalID.String())
	composed := sendTool(t, agent, "unibox_compose", map[string]any{"email_account_id": r.box.ID.String(),
		"to": []string{"erin@client.example"}, "subject": "Hi Erin", "body_plain": "Hi."})
	require.Equal(t, "accepted", composed.Status)
	require.Equal(t, "awaiting_approval", composed.Result.Result)
	var viaREST sendResult
	status, err := restCall(t, r.agent, "mailboxes_send", `{"id": "`+r.box.ID.String()+`", "to": ["dan@client.example"], "subject": "Hi Dan", "body_plain": "Hi."}`, &viaREST)
	require.NoError(t, err)
	require.Equal(t, "accepted", status, "over REST the tool answers 202 too")
	require.Equal(t, "awaiting_approval", viaREST.Result)
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
	require.Equal(t, int64(3), r.count(t, `SELECT count(*) FROM approvals WHERE status = 'pending' AND credential_id = $1`, r.agentKey.ID))
	res, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: "agent_policies_get_effective"})
	require.NoError(t, err)
	require.True(t, res.IsError)
	var envelope api.Error
	mcpResult(t, res, &envelope)
	require.Equal(t, "agent_policy_not_found", envelope.Code)

	// Under a policy holding the capability and the mailbox the same call sends, once per idempotency key.
	policy := r.grant(t, nil)
	res, err = agent.CallTool(ctx, &mcp.CallToolParams{Name: "agent_policies_get_effective"})
	require.NoError(t, err)
	var effective api.AgentPolicy
	mcpResult(t, res, &effective)
	require.Equal(t, policy.ID, effective.ID)

	send["idempotency_key"] = "send-1"
	sent := sendTool(t, agent, "mailboxes_send", send)
	require.Empty(t, sent.Status)
	require.Equal(t, "executed", sent.Result.Result)
	again := sendTool(t, agent, "mailboxes_send", send)
	require.Equal(t, sent.Result.TaskID, again.Result.TaskID, "a retry with the same key is the first answer")
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks WHERE id = $1`, sent.Result.TaskID))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks`))

	// A key limited to other mailboxes cannot name this one through a tool, as over REST.
	other := campMailbox(t, r.env, r.org, "other@example.com", 50)
	scoped, err := mcpConnect(t, r.env, scopedKey(t, r.env, r.org, auth.FullAccess, other))
	require.NoError(t, err)
	res, err = scoped.CallTool(ctx, &mcp.CallToolParams{Name: "mailboxes_send", Arguments: send})
	require.NoError(t, err)
	require.True(t, res.IsError)
	mcpResult(t, res, &envelope)
	require.Equal(t, "mailbox_not_found", envelope.Code)
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks`))
}

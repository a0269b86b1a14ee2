package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

var queries = dbq.New()

// Capability is what an agent policy lets a credential do without a person; it is also an approval's
// action type, so a held action is decided and executed by what it would have needed.
type Capability string

// The capabilities a policy can hold (the agent_policies CHECK lists the same).
const (
	CampaignLaunch   Capability = "campaign.launch"
	EmailCompose     Capability = "email.compose"
	InboxReply       Capability = "inbox.reply"
	MailboxProvision Capability = "mailbox.provision"
)

// Capabilities is every capability, in the contract's order.
var Capabilities = []Capability{CampaignLaunch, EmailCompose, InboxReply, MailboxProvision}

// Valid reports whether c is one of Capabilities.
func (c Capability) Valid() bool { return slices.Contains(Capabilities, c) }

// Action is one gated call as the gate weighs it.
type Action struct {
	// Capability is what the call needs.
	Capability Capability
	// Mailboxes are every mailbox the call sends from (none for provisioning).
	Mailboxes []uuid.UUID
	// Recipients is how many people it reaches: to+cc+bcc of a message, a run's leads.
	Recipients int
	// MonthlySpendCents is a provisioning order's monthly total (mailbox.provision only).
	MonthlySpendCents int64
}

// Decision is the gate's answer.
type Decision struct {
	// Allowed: act now. Otherwise hold the action for a person's approval.
	Allowed bool
	// Human: the caller is a signed-in person; nothing was counted against a policy.
	Human bool
	// PolicyID is the credential's enabled policy (uuid.Nil when it has none or the caller is a person).
	PolicyID uuid.UUID
	// Reasons say, in sentences for people, why the action was not allowed (empty when it was).
	Reasons []string
}

// Check decides whether p may do a now without a person (see the package documentation for the rules), in
// one statement for an API key or OAuth grant: an allowed action is counted against its policy's day in tx,
// so the count commits or rolls back with the action itself.
func Check(ctx context.Context, tx pgx.Tx, p *auth.Principal, a Action, now time.Time) (Decision, error) {
	if p == nil {
		return Decision{Reasons: []string{"The request has no credential, so nobody can be held to a policy."}}, nil
	}
	if p.Kind == auth.KindSession {
		return Decision{Allowed: true, Human: true}, nil
	}
	who, keys := credential(p)
	mailboxes := a.Mailboxes
	if mailboxes == nil {
		mailboxes = []uuid.UUID{}
	}
	pol, err := queries.AgentPolicyCheck(ctx, tx, dbq.AgentPolicyCheckParams{Day: Day(now), OrganizationID: p.OrganizationID,
		ApiKeyID: keys.ApiKeyID, OauthGrantID: keys.OauthGrantID, Now: now, Capability: string(a.Capability), MailboxIds: mailboxes,
		Recipients: int32(a.Recipients), MonthlySpendCents: a.MonthlySpendCents})
	if errors.Is(err, pgx.ErrNoRows) {
		disabled, err := queries.AgentPolicyDisabledExists(ctx, tx, dbq.AgentPolicyDisabledExistsParams{OrganizationID: p.OrganizationID,
			ApiKeyID: keys.ApiKeyID, OauthGrantID: keys.OauthGrantID})
		if err != nil {
			return Decision{}, fmt.Errorf("policy: %w", err)
		}
		if disabled {
			return Decision{Reasons: []string{"The " + who + "'s agent policy is disabled."}}, nil
		}
		return Decision{Reasons: []string{"The " + who + " has no agent policy."}}, nil
	}
	if err != nil {
		return Decision{}, fmt.Errorf("policy: %w", err)
	}
	d := Decision{Allowed: pol.Counted, PolicyID: pol.ID}
	if d.Allowed {
		return d, nil
	}
	// The statement decided; the rules below, read from the policy and the day's usage, say why.
	why, err := queries.AgentPolicyExplain(ctx, tx, dbq.AgentPolicyExplainParams{Day: Day(now), OrganizationID: p.OrganizationID, ID: pol.ID})
	if err != nil {
		return Decision{}, fmt.Errorf("policy: explain: %w", err)
	}
	if d.Reasons = refusals(why, a, now); len(d.Reasons) == 0 {
		// Another action of the same policy took the day's last room while this one waited for it.
		d.Reasons = []string{"Actions running at the same time used up the policy's daily limits (max_recipients_per_day, max_actions_per_day) for today (UTC)."}
	}
	return d, nil
}

// Day is the usage day an action at now counts on: its UTC date.
func Day(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// credentialKeys name a credential as the queries take it: exactly one of the two is valid.
type credentialKeys struct {
	ApiKeyID, OauthGrantID uuid.NullUUID
}

// credential names p's credential for people and for the queries.
func credential(p *auth.Principal) (string, credentialKeys) {
	if p.Kind == auth.KindOAuth {
		return "OAuth grant", credentialKeys{OauthGrantID: uuid.NullUUID{UUID: p.CredentialID, Valid: true}}
	}
	return "API key", credentialKeys{ApiKeyID: uuid.NullUUID{UUID: p.CredentialID, Valid: true}}
}

// refusals lists every rule of pol that a, at now, breaks, as sentences for people.
func refusals(pol dbq.AgentPolicyExplainRow, a Action, now time.Time) []string {
	var out []string
	if !pol.ExpiresAt.After(now) {
		out = append(out, fmt.Sprintf("The agent policy expired at %s.", pol.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	if !slices.Contains(pol.Capabilities, string(a.Capability)) {
		out = append(out, fmt.Sprintf("The agent policy does not include the capability %s.", a.Capability))
	}
	for _, m := range a.Mailboxes {
		if !slices.Contains(pol.MailboxIds, m) {
			out = append(out, fmt.Sprintf("Mailbox %s is not in the policy's mailbox_ids.", m))
		}
	}
	if a.Recipients > int(pol.MaxRecipientsPerRun) {
		out = append(out, fmt.Sprintf("The action reaches %d recipients; the policy allows %d per run (max_recipients_per_run).",
			a.Recipients, pol.MaxRecipientsPerRun))
	}
	if total := int(pol.UsedRecipients) + a.Recipients; total > int(pol.MaxRecipientsPerDay) {
		out = append(out, fmt.Sprintf("The action's %d recipients would bring today's (UTC) total to %d; the policy allows %d a day (max_recipients_per_day).",
			a.Recipients, total, pol.MaxRecipientsPerDay))
	}
	if pol.UsedActions >= pol.MaxActionsPerDay {
		out = append(out, fmt.Sprintf("The policy's %d actions for today (UTC) are used up (max_actions_per_day).", pol.MaxActionsPerDay))
	}
	if a.Capability == MailboxProvision {
		switch {
		case !pol.MaxMonthlyMailboxSpendCents.Valid:
			out = append(out, "Provisioning mailboxes needs max_monthly_mailbox_spend_cents on the policy.")
		case a.MonthlySpendCents > pol.MaxMonthlyMailboxSpendCents.Int64:
			out = append(out, fmt.Sprintf("The order costs %d cents a month; the policy allows %d (max_monthly_mailbox_spend_cents).",
				a.MonthlySpendCents, pol.MaxMonthlyMailboxSpendCents.Int64))
		}
	}
	return out
}

package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Limits of a policy (the agent_policies CHECKs hold the same).
const (
	MaxName      = 255
	MaxMailboxes = 1000
)

// Input is a policy as a person writes it: the body of a create or of a replace.
type Input struct {
	Name    string
	Enabled bool
	// APIKeyID or OAuthGrantID (exactly one, the other uuid.Nil) is the credential the policy governs.
	APIKeyID, OAuthGrantID uuid.UUID
	Capabilities           []Capability
	MailboxIDs             []uuid.UUID
	MaxRecipientsPerRun    int
	MaxRecipientsPerDay    int
	MaxActionsPerDay       int
	// MaxMonthlyMailboxSpendCents caps provisioning orders (nil: none; mailbox.provision needs it).
	MaxMonthlyMailboxSpendCents *int64
	ExpiresAt                   time.Time
}

var errNotFound = apierror.NotFound("agent_policy_not_found", "Agent policy not found.")

// List is every policy of org, newest first.
func List(ctx context.Context, tx pgx.Tx, org uuid.UUID) ([]dbq.AgentPolicy, error) {
	return queries.AgentPolicyList(ctx, tx, org)
}

// Create checks in and stores it as a policy of org made by user (uuid.Nil: nobody) at now.
func Create(ctx context.Context, tx pgx.Tx, org, user uuid.UUID, in Input, now time.Time) (dbq.AgentPolicy, error) {
	if err := check(ctx, tx, org, &in, now); err != nil {
		return dbq.AgentPolicy{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.AgentPolicy{}, err
	}
	row, err := queries.AgentPolicyInsert(ctx, tx, dbq.AgentPolicyInsertParams{OrganizationID: org, ID: id, Name: in.Name, Enabled: in.Enabled,
		ApiKeyID: nullID(in.APIKeyID), OauthGrantID: nullID(in.OAuthGrantID), Capabilities: capabilityNames(in.Capabilities),
		MailboxIds: in.MailboxIDs, MaxRecipientsPerRun: int32(in.MaxRecipientsPerRun), MaxRecipientsPerDay: int32(in.MaxRecipientsPerDay),
		MaxActionsPerDay: int32(in.MaxActionsPerDay), MaxMonthlyMailboxSpendCents: spend(in.MaxMonthlyMailboxSpendCents),
		ExpiresAt: in.ExpiresAt, CreatedBy: nullID(user)})
	return row, stored(err)
}

// Replace makes policy id of org exactly in (PUT): every field is the request's; today's usage stays counted.
func Replace(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, in Input, now time.Time) (dbq.AgentPolicy, error) {
	if _, err := queries.AgentPolicyGet(ctx, tx, dbq.AgentPolicyGetParams{OrganizationID: org, ID: id}); errors.Is(err, pgx.ErrNoRows) {
		return dbq.AgentPolicy{}, errNotFound
	} else if err != nil {
		return dbq.AgentPolicy{}, err
	}
	if err := check(ctx, tx, org, &in, now); err != nil {
		return dbq.AgentPolicy{}, err
	}
	row, err := queries.AgentPolicyReplace(ctx, tx, dbq.AgentPolicyReplaceParams{Name: in.Name, Enabled: in.Enabled,
		ApiKeyID: nullID(in.APIKeyID), OauthGrantID: nullID(in.OAuthGrantID), Capabilities: capabilityNames(in.Capabilities),
		MailboxIds: in.MailboxIDs, MaxRecipientsPerRun: int32(in.MaxRecipientsPerRun), MaxRecipientsPerDay: int32(in.MaxRecipientsPerDay),
		MaxActionsPerDay: int32(in.MaxActionsPerDay), MaxMonthlyMailboxSpendCents: spend(in.MaxMonthlyMailboxSpendCents),
		ExpiresAt: in.ExpiresAt, OrganizationID: org, ID: id})
	return row, stored(err)
}

// Delete removes policy id of org (and its usage): its credential's actions wait for approvals again.
func Delete(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) error {
	n, err := queries.AgentPolicyDelete(ctx, tx, dbq.AgentPolicyDeleteParams{OrganizationID: org, ID: id})
	if err == nil && n == 0 {
		return errNotFound
	}
	return err
}

// Effective is the enabled policy that governs p's credential. A session acts as its person and an API key or
// OAuth grant without one has every action held for approval: both answer 404 agent_policy_not_found saying so.
func Effective(ctx context.Context, tx pgx.Tx, p *auth.Principal) (dbq.AgentPolicy, error) {
	if p == nil || p.Kind == auth.KindSession {
		return dbq.AgentPolicy{}, apierror.NotFound("agent_policy_not_found",
			"A session acts as its signed-in person, whom no agent policy governs: everything the person may do runs at once.")
	}
	who, keys := credential(p)
	row, err := queries.AgentPolicyEffective(ctx, tx, dbq.AgentPolicyEffectiveParams{OrganizationID: p.OrganizationID,
		ApiKeyID: keys.ApiKeyID, OauthGrantID: keys.OauthGrantID})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, apierror.NotFound("agent_policy_not_found", "The "+who+" has no enabled agent policy, so each send, reply, launch or "+
			"provisioning it asks for waits for a person's approval (answered 202 awaiting_approval).").
			WithFix("An owner or settings manager can grant one with POST /agent-policies.")
	}
	return row, err
}

// check validates in for org at now and normalizes it (trimmed name, mailbox ids once each).
func check(ctx context.Context, tx pgx.Tx, org uuid.UUID, in *Input, now time.Time) error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > MaxName {
		return apierror.BadRequest("invalid_name", fmt.Sprintf("name is required: at most %d characters.", MaxName))
	}
	if (in.APIKeyID == uuid.Nil) == (in.OAuthGrantID == uuid.Nil) {
		return apierror.BadRequest("invalid_policy_credential", "Set exactly one of api_key_id and oauth_grant_id: a policy governs one credential.")
	}
	if len(in.Capabilities) == 0 {
		return apierror.BadRequest("invalid_capabilities", "capabilities needs at least one of campaign.launch, email.compose, inbox.reply, mailbox.provision.")
	}
	seen := map[Capability]bool{}
	for _, c := range in.Capabilities {
		if !c.Valid() {
			return apierror.BadRequest("invalid_capabilities", fmt.Sprintf("%q is not a capability: use campaign.launch, email.compose, inbox.reply or mailbox.provision.", c))
		}
		if seen[c] {
			return apierror.BadRequest("invalid_capabilities", fmt.Sprintf("capabilities lists %s twice.", c))
		}
		seen[c] = true
	}
	if sp := in.MaxMonthlyMailboxSpendCents; sp != nil && *sp < 0 || seen[MailboxProvision] && sp == nil {
		return apierror.BadRequest("spend_limit_required",
			"mailbox.provision needs max_monthly_mailbox_spend_cents (0 or more): provisioning is autonomous only for orders whose monthly total fits under it.")
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"max_recipients_per_run", in.MaxRecipientsPerRun}, {"max_recipients_per_day", in.MaxRecipientsPerDay}, {"max_actions_per_day", in.MaxActionsPerDay}} {
		if n.v < 1 {
			return apierror.BadRequest("invalid_"+n.field, n.field+" must be 1 or more.")
		}
	}
	if !in.ExpiresAt.After(now) {
		return apierror.BadRequest("invalid_expires_at", "expires_at must be in the future: a policy always ends.")
	}
	var ids []uuid.UUID
	for _, id := range in.MailboxIDs {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || len(ids) > MaxMailboxes {
		return apierror.BadRequest("invalid_mailbox_ids", fmt.Sprintf("mailbox_ids names 1 to %d mailboxes the credential may send from.", MaxMailboxes))
	}
	in.MailboxIDs = ids
	unknown, err := queries.AgentPolicyUnknownMailboxes(ctx, tx, dbq.AgentPolicyUnknownMailboxesParams{Ids: ids, OrganizationID: org})
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return apierror.BadRequest("unknown_mailbox", fmt.Sprintf("Mailbox %s in mailbox_ids is not a mailbox of this organization.", unknown[0]))
	}
	return liveCredential(ctx, tx, org, *in, now)
}

// liveCredential refuses a policy for a key or grant that is not the organization's or no longer works.
func liveCredential(ctx context.Context, tx pgx.Tx, org uuid.UUID, in Input, now time.Time) error {
	if in.APIKeyID != uuid.Nil {
		live, err := queries.AgentPolicyAPIKeyLive(ctx, tx, dbq.AgentPolicyAPIKeyLiveParams{OrganizationID: org, ID: in.APIKeyID, Now: now})
		if err == nil && !live {
			err = apierror.NotFound("api_key_not_found", fmt.Sprintf("API key %s is not a live key of this organization (unknown, revoked or expired).", in.APIKeyID))
		}
		return err
	}
	live, err := queries.AgentPolicyOAuthGrantLive(ctx, tx, dbq.AgentPolicyOAuthGrantLiveParams{OrganizationID: org, ID: in.OAuthGrantID})
	if err == nil && !live {
		err = apierror.NotFound("oauth_grant_not_found", fmt.Sprintf("OAuth grant %s is not a live grant of this organization (unknown or revoked).", in.OAuthGrantID))
	}
	return err
}

// stored maps a write's error: a second enabled policy for one credential is a conflict.
func stored(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return apierror.Conflict("agent_policy_exists", "The credential already has an enabled agent policy; change that one, or disable it first.").WithCause(err)
	}
	return err
}

func capabilityNames(cs []Capability) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

func spend(v *int64) pgtype.Int8 {
	if v == nil {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: *v, Valid: true}
}

func nullID(id uuid.UUID) uuid.NullUUID { return uuid.NullUUID{UUID: id, Valid: id != uuid.Nil} }

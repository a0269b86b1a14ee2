package policy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

var queries = dbq.New()

// rig is an organization with an API key and an OAuth grant, and the clock the checks run at.
type rig struct {
	d     *dbtest.DB
	org   uuid.UUID
	key   *auth.Principal
	grant *auth.Principal
	box   uuid.UUID
	now   time.Time
}

func setup(t *testing.T) *rig {
	t.Helper()
	d := dbtest.New(t)
	ctx := context.Background()
	boot, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	r := &rig{d: d, org: boot.OrganizationID, box: uuid.New(), now: time.Date(2030, 3, 14, 22, 30, 0, 0, time.UTC),
		key: &auth.Principal{Kind: auth.KindAPIKey, CredentialID: boot.APIKeyID, OrganizationID: boot.OrganizationID}}
	owner := d.OwnerPool(t)
	client, grant := uuid.New(), uuid.New()
	_, err = owner.Exec(ctx, `INSERT INTO oauth_clients (id, client_id, client_type, token_endpoint_auth_method, name, redirect_uris, grant_types, scopes)
		VALUES ($1, $2, 'public', 'none', 'Agent', '{https://agent.example/cb}', '{authorization_code}', 0)`, client, client.String())
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO oauth_grants (organization_id, id, client_id, user_id, scopes) VALUES ($1, $2, $3, $4, 0)`,
		r.org, grant, client, boot.UserID)
	require.NoError(t, err)
	r.grant = &auth.Principal{Kind: auth.KindOAuth, CredentialID: grant, OrganizationID: r.org, UserID: boot.UserID}
	return r
}

// policy binds a policy to p's credential: email.compose from the rig's mailbox, 5 recipients a run, 10 a day,
// 3 actions a day, a day to live; change adjusts it first.
func (r *rig) policy(t *testing.T, p *auth.Principal, change func(*dbq.AgentPolicyInsertParams)) uuid.UUID {
	t.Helper()
	in := dbq.AgentPolicyInsertParams{OrganizationID: r.org, ID: uuid.New(), Name: "agent", Enabled: true,
		Capabilities: []string{string(policy.EmailCompose)}, MailboxIds: []uuid.UUID{r.box}, MaxRecipientsPerRun: 5,
		MaxRecipientsPerDay: 10, MaxActionsPerDay: 3, ExpiresAt: r.now.Add(24 * time.Hour)}
	if p.Kind == auth.KindOAuth {
		in.OauthGrantID = uuid.NullUUID{UUID: p.CredentialID, Valid: true}
	} else {
		in.ApiKeyID = uuid.NullUUID{UUID: p.CredentialID, Valid: true}
	}
	if change != nil {
		change(&in)
	}
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := queries.AgentPolicyInsert(ctx, tx, in)
		return err
	}))
	return in.ID
}

// check runs the gate for p in a transaction of its own that commits, as a gated request's would.
func (r *rig) check(t *testing.T, p *auth.Principal, a policy.Action, now time.Time) policy.Decision {
	t.Helper()
	var d policy.Decision
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		d, err = policy.Check(ctx, tx, p, a, now)
		return err
	}))
	return d
}

// usage reads what the policy counted on day.
func (r *rig) usage(t *testing.T, id uuid.UUID, day time.Time) (recipients, actions int) {
	t.Helper()
	err := r.d.OwnerPool(t).QueryRow(context.Background(), `SELECT recipients, actions FROM agent_policy_usage WHERE policy_id = $1 AND day = $2`,
		id, day).Scan(&recipients, &actions)
	if err == pgx.ErrNoRows {
		return 0, 0
	}
	require.NoError(t, err)
	return recipients, actions
}

func (r *rig) send(n int) policy.Action {
	return policy.Action{Capability: policy.EmailCompose, Mailboxes: []uuid.UUID{r.box}, Recipients: n}
}

func TestCheckAllowsASessionAsAPersonAndCountsNothing(t *testing.T) {
	t.Parallel()
	r := setup(t)
	d := r.check(t, &auth.Principal{Kind: auth.KindSession, CredentialID: uuid.New(), OrganizationID: r.org}, r.send(500), r.now)
	require.Equal(t, policy.Decision{Allowed: true, Human: true}, d)
}

func TestCheckRefusesACredentialWithoutAnEnabledPolicy(t *testing.T) {
	t.Parallel()
	r := setup(t)
	d := r.check(t, r.key, r.send(1), r.now)
	require.False(t, d.Allowed)
	require.Equal(t, []string{"The API key has no agent policy."}, d.Reasons)
	require.Equal(t, []string{"The OAuth grant has no agent policy."}, r.check(t, r.grant, r.send(1), r.now).Reasons)

	id := r.policy(t, r.key, func(p *dbq.AgentPolicyInsertParams) { p.Enabled = false })
	d = r.check(t, r.key, r.send(1), r.now)
	require.False(t, d.Allowed)
	require.Equal(t, []string{"The API key's agent policy is disabled."}, d.Reasons)
	rec, acts := r.usage(t, id, policy.Day(r.now))
	require.Zero(t, rec+acts)
}

func TestCheckAllowsWithinThePolicyAndCountsTheUTCDay(t *testing.T) {
	t.Parallel()
	r := setup(t)
	id := r.policy(t, r.grant, nil)
	d := r.check(t, r.grant, r.send(4), r.now)
	require.Equal(t, policy.Decision{Allowed: true, PolicyID: id}, d)
	d = r.check(t, r.grant, r.send(5), r.now.Add(time.Hour)) // 23:30 UTC: the same day
	require.True(t, d.Allowed, d.Reasons)
	rec, acts := r.usage(t, id, policy.Day(r.now))
	require.Equal(t, 9, rec)
	require.Equal(t, 2, acts)

	// Two more recipients would make 11 of 10 a day: refused and not counted.
	d = r.check(t, r.grant, r.send(2), r.now.Add(time.Hour))
	require.False(t, d.Allowed)
	require.Equal(t, id, d.PolicyID)
	require.Equal(t, []string{"The action's 2 recipients would bring today's (UTC) total to 11; the policy allows 10 a day (max_recipients_per_day)."}, d.Reasons)
	rec, acts = r.usage(t, id, policy.Day(r.now))
	require.Equal(t, 9, rec)
	require.Equal(t, 2, acts)
	// The last one fits; then the day's three actions are used up, whatever the recipients.
	require.True(t, r.check(t, r.grant, r.send(1), r.now).Allowed)
	d = r.check(t, r.grant, r.send(0), r.now)
	require.Equal(t, []string{"The policy's 3 actions for today (UTC) are used up (max_actions_per_day)."}, d.Reasons)

	// The next UTC day starts afresh (00:30 UTC, though it is still the 14th west of Greenwich).
	tomorrow := r.now.Add(2 * time.Hour)
	require.True(t, r.check(t, r.grant, r.send(5), tomorrow.In(time.FixedZone("PDT", -7*3600))).Allowed)
	rec, acts = r.usage(t, id, policy.Day(tomorrow))
	require.Equal(t, 5, rec)
	require.Equal(t, 1, acts)
}

func TestCheckNamesEveryRuleTheActionBreaks(t *testing.T) {
	t.Parallel()
	r := setup(t)
	id := r.policy(t, r.key, nil)
	other := uuid.New()
	cases := []struct {
		name   string
		action policy.Action
		at     time.Time
		reason string
	}{
		{"expired", r.send(1), r.now.Add(24 * time.Hour), "The agent policy expired at 2030-03-15T22:30:00Z."},
		{"capability", policy.Action{Capability: policy.InboxReply, Mailboxes: []uuid.UUID{r.box}, Recipients: 1}, r.now,
			"The agent policy does not include the capability inbox.reply."},
		{"mailbox", policy.Action{Capability: policy.EmailCompose, Mailboxes: []uuid.UUID{r.box, other}, Recipients: 1}, r.now,
			"Mailbox " + other.String() + " is not in the policy's mailbox_ids."},
		{"per run", r.send(6), r.now, "The action reaches 6 recipients; the policy allows 5 per run (max_recipients_per_run)."},
	}
	for _, c := range cases {
		d := r.check(t, r.key, c.action, c.at)
		require.False(t, d.Allowed, c.name)
		require.Equal(t, []string{c.reason}, d.Reasons, c.name)
		require.Equal(t, id, d.PolicyID, c.name)
	}
	rec, acts := r.usage(t, id, policy.Day(r.now))
	require.Zero(t, rec+acts, "refused actions count nothing")
}

func TestCheckHoldsProvisioningToTheMonthlySpend(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.policy(t, r.key, func(p *dbq.AgentPolicyInsertParams) {
		p.Capabilities = []string{string(policy.MailboxProvision)}
		p.MaxMonthlyMailboxSpendCents = pgtype.Int8{Int64: 5000, Valid: true}
	})
	provision := func(cents int64) policy.Decision {
		return r.check(t, r.key, policy.Action{Capability: policy.MailboxProvision, MonthlySpendCents: cents}, r.now)
	}
	require.True(t, provision(5000).Allowed)
	d := provision(5001)
	require.False(t, d.Allowed)
	require.Equal(t, []string{"The order costs 5001 cents a month; the policy allows 5000 (max_monthly_mailbox_spend_cents)."}, d.Reasons)
}

func TestCheckLetsOnlyOneOfTwoConcurrentActionsTakeTheLastUnit(t *testing.T) {
	t.Parallel()
	r := setup(t)
	id := r.policy(t, r.key, func(p *dbq.AgentPolicyInsertParams) { p.MaxActionsPerDay = 1 })
	for round := range 5 {
		day := r.now.AddDate(0, 0, -round) // a fresh day each round, within the policy's life
		var wg sync.WaitGroup
		allowed := make([]bool, 2)
		start := make(chan struct{})
		for i := range allowed {
			wg.Go(func() {
				<-start
				allowed[i] = r.check(t, r.key, r.send(1), day).Allowed
			})
		}
		close(start)
		wg.Wait()
		require.NotEqual(t, allowed[0], allowed[1], "exactly one of the two passes")
		rec, acts := r.usage(t, id, policy.Day(day))
		require.Equal(t, 1, rec)
		require.Equal(t, 1, acts)
	}
}

func TestCheckCountRollsBackWithTheAction(t *testing.T) {
	t.Parallel()
	r := setup(t)
	id := r.policy(t, r.key, nil)
	err := db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		d, err := policy.Check(ctx, tx, r.key, r.send(3), r.now)
		require.NoError(t, err)
		require.True(t, d.Allowed)
		return context.Canceled // the action failed after the gate
	})
	require.ErrorIs(t, err, context.Canceled)
	rec, acts := r.usage(t, id, policy.Day(r.now))
	require.Zero(t, rec+acts)
}

func TestCheckRefusesTheActionThatWaitedOnAnotherForTheDaysLastUnit(t *testing.T) {
	t.Parallel()
	r := setup(t)
	id := r.policy(t, r.key, func(p *dbq.AgentPolicyInsertParams) { p.MaxRecipientsPerDay = 5 })
	ctx := context.Background()
	first, err := r.d.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = first.Rollback(ctx) }()
	_, err = first.Exec(ctx, "SELECT set_config('outflow.organization_id', $1, true)", r.org.String())
	require.NoError(t, err)
	d, err := policy.Check(ctx, first, r.key, r.send(4), r.now)
	require.NoError(t, err)
	require.True(t, d.Allowed)

	// The second runs while the first has not committed (its rules hold on what it can see), so only the count
	// can stop it: it waits on the first's row and then finds no room.
	second := make(chan policy.Decision, 1)
	go func() { second <- r.check(t, r.key, r.send(2), r.now) }()
	owner := r.d.OwnerPool(t)
	require.Eventually(t, func() bool {
		var waiting bool
		require.NoError(t, owner.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%agent_policy_usage%')`).Scan(&waiting))
		return waiting
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, first.Commit(ctx))
	d = <-second
	require.False(t, d.Allowed)
	require.Equal(t, []string{"The action's 2 recipients would bring today's (UTC) total to 6; the policy allows 5 a day (max_recipients_per_day)."},
		d.Reasons, "the refusal is explained by what the first one counted")
	rec, acts := r.usage(t, id, policy.Day(r.now))
	require.Equal(t, 4, rec)
	require.Equal(t, 1, acts)
}

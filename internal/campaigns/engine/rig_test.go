package engine_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

const (
	user     = "ada@example.com"
	smtpPass = "smtp-secret-1"
	imapPass = "imap-secret-2"
)

// rig is an organization with one mailbox whose SMTP server runs in process, the engine and a send pipeline
// on one simulated clock, and no workers: tests run the engine and work the queued sends step by step.
type rig struct {
	env *apitest.Env
	org uuid.UUID
	c   *api.Client
	// person is the owner's session: a person, whom the agent policy gate never holds.
	person *api.Client
	smtp   *mailtest.SMTPServer
	imap   *mailtest.IMAPServer
	box    *api.Mailbox
	jobs   events.Inserter
	clock  time.Time
	eng    *engine.Engine
	pipe   *sending.Pipeline
}

func newRig(t testing.TB) *rig {
	t.Helper()
	env := apitest.New(t, apitest.MailPeers(mailtest.CAFile(t)))
	boot := env.Bootstrap(t, "acme")
	r := &rig{env: env, org: boot.OrganizationID, c: env.Client(t, boot.APIKey), person: env.Owner(t, "acme"),
		smtp: mailtest.NewSMTPServer(t, user, smtpPass), clock: time.Now().Add(time.Minute).Truncate(time.Second)}
	imap := mailtest.NewIMAPServer(t, user, imapPass)
	r.imap = imap
	box, err := r.c.MailboxesCreate(context.Background(), &api.CreateEmailAccount{
		Provider: api.CreateEmailAccountProviderSMTPImap, Email: user, Name: "Ada Lovelace",
		SMTP:        api.NewOptMailService(apitest.MailService(t, r.smtp.Addr, user, smtpPass)),
		Imap:        api.NewOptMailService(apitest.MailService(t, imap.Addr, user, imapPass)),
		MinWaitTime: api.NewOptInt(0), CampaignLimit: api.NewOptInt(500),
	}, api.MailboxesCreateParams{})
	require.NoError(t, err)
	r.box = box
	inserter, err := jobs.NewClient(jobs.Deps{Pool: env.DB.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(t, err)
	r.jobs = inserter
	keyring, err := seal.NewKeyring(env.Config.SecretKey)
	require.NoError(t, err)
	r.eng = engine.New(env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now})
	r.pipe = sending.New(env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second},
		slog.New(slog.DiscardHandler), 72*time.Hour).WithClock(r.now)
	r.pipe.OnSettle(r.eng.Settle)
	return r
}

func (r *rig) now() time.Time { return r.clock }

// advance moves the simulated clock.
func (r *rig) advance(d time.Duration) { r.clock = r.clock.Add(d) }

// run runs the engine once at the rig's clock.
func (r *rig) run(t testing.TB) engine.Stats {
	t.Helper()
	st, err := r.eng.RunDue(context.Background(), r.jobs)
	require.NoError(t, err)
	return st
}

// work attempts every queued send due at the clock once, as send workers would, and answers how many.
func (r *rig) work(t testing.TB) int {
	t.Helper()
	var tasks []sending.Args
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, mailbox_id FROM send_tasks WHERE status = 'queued' AND not_before <= $1 ORDER BY id`, r.clock)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a := sending.Args{OrganizationID: r.org}
			if err := rows.Scan(&a.TaskID, &a.MailboxID); err != nil {
				return err
			}
			tasks = append(tasks, a)
		}
		return rows.Err()
	})
	outbox := events.NewOutbox(r.jobs)
	for _, a := range tasks {
		_, err := r.pipe.Attempt(context.Background(), outbox, a)
		require.NoError(t, err)
	}
	return len(tasks)
}

func (r *rig) query(t testing.TB, f func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, f))
}

func (r *rig) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
}

// leadRow is a lead as the tests read it.
type leadRow struct {
	State, WaitReason, Failure string
	Position, Sent, Bounced    int
	Due                        *time.Time
	Task                       *uuid.UUID
}

// waitOf and dueOf are a lead's wait reason and due time as the lead hold reports them (campaign.LeadWait): a
// lead due within its campaign's park (campaigns k joined) waits for the park's end, for its reason.
const (
	waitOf = `(CASE WHEN l.due_at <= k.parked_before AND k.parked_until > l.due_at THEN k.parked_reason ELSE l.wait_reason END)`
	dueOf  = `(CASE WHEN l.due_at <= k.parked_before AND k.parked_until > l.due_at THEN k.parked_until ELSE l.due_at END)`
	parkOf = ` JOIN campaigns k ON k.organization_id = l.organization_id AND k.id = l.campaign_id `
)

func (r *rig) lead(t testing.TB, campaign uuid.UUID, email string) leadRow {
	t.Helper()
	var l leadRow
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT l.state, `+waitOf+`, l.failure_reason, l.step_position, l.sent, l.bounced, `+dueOf+`, l.task_id
			FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id`+parkOf+`
			WHERE l.campaign_id = $1 AND c.email = $2`, campaign, email).
			Scan(&l.State, &l.WaitReason, &l.Failure, &l.Position, &l.Sent, &l.Bounced, &l.Due, &l.Task)
	})
	return l
}

// eventCount counts the organization's outbox events of a type.
func (r *rig) eventCount(t testing.TB, typ events.Type) int {
	t.Helper()
	var n int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM event_outbox WHERE event_type = $1`, string(typ)).Scan(&n)
	})
	return n
}

// campaign creates and starts a campaign over the contacts with the steps, sending all day every day in UTC.
func (r *rig) campaign(t testing.TB, steps []api.CampaignStepCreate, emails ...string) uuid.UUID {
	t.Helper()
	id := r.create(t, steps)
	r.addLeads(t, id, emails...)
	r.start(t, id)
	return id
}

// create creates a draft campaign with the steps, sending all day every day in UTC.
func (r *rig) create(t testing.TB, steps []api.CampaignStepCreate) uuid.UUID {
	t.Helper()
	c, err := r.c.CampaignsCreate(context.Background(), &api.CampaignCreate{Name: "Launch", Steps: steps,
		Timezone: api.NewOptString("UTC"), Days: api.NewOptInt(127), StartTime: api.NewOptString("00:00"),
		EndTime: api.NewOptString("24:00"), DailyLimit: api.NewOptInt(1000)}, api.CampaignsCreateParams{})
	require.NoError(t, err)
	return c.ID
}

// addLeads creates contacts with the addresses as leads of the campaign, as the owner: a person, whose leads
// for a campaign that sends are never held (the rig's API key would need an agent policy).
func (r *rig) addLeads(t testing.TB, id uuid.UUID, emails ...string) {
	t.Helper()
	contacts := make([]api.ContactCreate, len(emails))
	for i, e := range emails {
		contacts[i] = api.ContactCreate{Email: e, FirstName: api.NewOptString("Lead"), Campaigns: []uuid.UUID{id}}
	}
	res, err := r.person.ContactsCreate(context.Background(), contacts, api.ContactsCreateParams{})
	require.NoError(t, err)
	require.IsType(t, &api.ContactsCreateOKApplicationJSON{}, res, "the leads are added at once")
}

// start starts campaign id as the owner: a person, whom the agent policy gate does not hold (the rig's API key
// would need a policy).
func (r *rig) start(t testing.TB, id uuid.UUID) {
	t.Helper()
	_, err := r.person.CampaignsStart(context.Background(), api.CampaignsStartParams{ID: id})
	require.NoError(t, err)
}

package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/jobs"
)

// The week simulation (sim_test.go, bench_test.go): three campaigns sharing one organization's mailboxes are
// run by the engine and the real send pipeline on one simulated clock for seven days, then checked with SQL
// over what was sent (simcheck_test.go). Mailboxes, contacts and leads are written in bulk; the campaigns are
// created and started through the API, so their settings are validated as a user's would be.

// span is a sending window: minutes of a local day, [start, end).
type span struct{ start, end int }

// simCampaign is one simulated campaign, in the terms the checks read it back in.
type simCampaign struct {
	name       string
	zone       string
	week       [7][]span // by time.Weekday (Sunday = 0)
	legacy     bool      // created with days, start_time and end_time (one span, the same every sending day)
	dailyLimit int
	maxNew     int    // max_new_leads_per_day (0: unlimited)
	ramp       [3]int // ramp_start, ramp_increment, ramp_ceiling (zeros: no ramp)
	rotation   api.CampaignCreateRotationMode
	startDays  int    // start_date this many days after the simulation starts (0: none)
	tag        int    // the mailbox tag it sends from (0 or 1), or -1 for its explicit pool
	contacts   [2]int // the contacts (by number) that are its leads, [lo, hi)
}

// simSpec is a simulation's size and campaigns (see weekSpec).
type simSpec struct {
	mailboxes, contacts int
	campaigns           []simCampaign
}

// weekSpec is the simulated week at scale f: f times 50 mailboxes, 4,500 contacts and 5,000 leads, with the
// daily limits and quota scaled alike (not the ramp: its ceiling may not pass a mailbox's cap). The test runs
// f = 1, the benchmark 20. Mailboxes cycle through four zones (so their days turn at different instants),
// daily caps of 6, 10 and 14 and gaps of 5 to 20 minutes; tag 0 is on the first 60% of them, tag 1 on the
// last 60%, and the legacy campaign's explicit pool is the 20% in the middle (in both tag pools). The contacts
// of the Berlin and legacy campaigns overlap by 500·f.
func weekSpec(f int) simSpec {
	weekdays := func(spans ...span) [7][]span {
		var w [7][]span
		for d := time.Monday; d <= time.Friday; d++ {
			w[d] = spans
		}
		return w
	}
	everyDay := func(spans ...span) [7][]span {
		var w [7][]span
		for d := range w {
			w[d] = spans
		}
		return w
	}
	legacy := weekdays(span{10 * 60, 16 * 60})
	legacy[time.Saturday] = []span{{10 * 60, 16 * 60}}
	return simSpec{mailboxes: 50 * f, contacts: 4500 * f, campaigns: []simCampaign{
		{name: "New York", zone: "America/New_York", week: weekdays(span{9 * 60, 12 * 60}, span{13 * 60, 17 * 60}),
			dailyLimit: 120 * f, rotation: api.CampaignCreateRotationModeRoundRobin, tag: 0, contacts: [2]int{0, 2000 * f}},
		{name: "Berlin", zone: "Europe/Berlin", week: everyDay(span{8 * 60, 18 * 60}), dailyLimit: 150 * f, maxNew: 60 * f,
			rotation: api.CampaignCreateRotationModeLeastUsed, startDays: 1, tag: 1, contacts: [2]int{2000 * f, 4000 * f}},
		{name: "Legacy", zone: "UTC", week: legacy, legacy: true, dailyLimit: 100 * f, ramp: [3]int{20, 15, 50},
			rotation: api.CampaignCreateRotationModeWeighted, tag: -1, contacts: [2]int{3500 * f, 4500 * f}},
	}}
}

// simStart is the Monday (00:00 UTC) starting the first week after now that holds a European daylight saving
// change (the last Sunday of March or October), so the Berlin campaign and the Berlin mailboxes live through a
// 23- or 25-hour day.
func simStart(now time.Time) time.Time {
	for y := now.Year(); ; y++ {
		for _, m := range []time.Month{time.March, time.October} {
			sunday := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC) // the month's last day
			sunday = sunday.AddDate(0, 0, -int(sunday.Weekday()))
			if monday := sunday.AddDate(0, 0, -6); monday.After(now.Add(time.Hour)) {
				return monday
			}
		}
	}
}

// simZones, simCap and simGap lay the mailboxes out (see weekSpec): mailbox i's zone, daily campaign_limit and
// min_wait_time (seconds).
var simZones = []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo"}

func simCap(i int) int32 { return int32(6 + 4*(i%3)) }
func simGap(i int) int32 { return int32(300 * (1 + i%4)) }

// simSMTP is the SMTP server every simulated mailbox sends to, as one user.
type simSMTP struct{ addr, user, pass string }

// sim is a running simulation: the API, the engine and the pipeline on one simulated clock, and what the run
// measured.
type sim struct {
	spec      simSpec
	env       *apitest.Env
	org       uuid.UUID
	c         *api.Client
	jobs      events.Inserter
	eng       *engine.Engine
	pipe      *sending.Pipeline
	start     time.Time
	end       time.Time // seven days after start
	clock     time.Time
	campaigns []uuid.UUID // in spec order
	tags      [2]uuid.UUID
	explicit  []uuid.UUID // the legacy campaign's senders

	// open is what the harness knows of the queued send tasks (their mailbox and not_before), and lastTask the
	// newest task it has seen (task ids grow with time).
	open     map[uuid.UUID]simTask
	lastTask uuid.UUID

	// Measured: events run, time inside the engine's runs, its passes, the leads they looked at (planned or
	// parked), the sends they enqueued and how late each was planned.
	events         int
	scheduler      time.Duration
	passes, looked int
	sends          int
	lateness       []time.Duration
}

type simTask struct {
	mailbox   uuid.UUID
	notBefore time.Time
}

// simWorkers is how many send attempts run at once (attempts on one mailbox take turns in the pipeline).
const simWorkers = 4

// maxStep is the longest the clock jumps at once, so nothing that turns with the clock is stepped over.
const maxStep = time.Hour

// newSim builds the organization, its mailboxes, contacts, campaigns and leads, and starts the campaigns;
// the clock stands at the simulation's start.
func newSim(tb testing.TB, spec simSpec, srv simSMTP) *sim {
	tb.Helper()
	env := apitest.New(tb)
	boot := env.Bootstrap(tb, "acme")
	s := &sim{spec: spec, env: env, org: boot.OrganizationID, c: env.Client(tb, boot.APIKey), start: simStart(time.Now()),
		open: map[uuid.UUID]simTask{}}
	s.clock, s.end = s.start, s.start.Add(7*24*time.Hour)
	inserter, err := jobs.NewClient(jobs.Deps{Pool: env.DB.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(tb, err)
	s.jobs = inserter
	keyring, err := seal.NewKeyring(env.Config.SecretKey)
	require.NoError(tb, err)
	signer, err := tracking.NewSigner(env.Config.SecretKey)
	require.NoError(tb, err)
	s.eng = engine.New(env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: s.now,
		Tracking: engine.Tracking{Signer: signer, Host: "t.outflow.test", PublicURL: "http://api.outflow.test"}})
	s.pipe = sending.New(env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: env.DB.Pool},
		mailbox.Dialer{AllowInsecure: true, Timeout: 10 * time.Second}, slog.New(slog.DiscardHandler), 72*time.Hour).WithClock(s.now)
	s.pipe.OnSettle(s.eng.Settle)

	ctx := context.Background()
	for i := range s.tags {
		l, err := s.c.LabelsCreateTag(ctx, &api.CreateLabel{Title: fmt.Sprintf("pool %d", i)}, api.LabelsCreateTagParams{})
		require.NoError(tb, err)
		s.tags[i] = l.ID
	}
	s.insertMailboxes(tb, keyring, srv)
	s.insertContacts(tb)
	for _, c := range spec.campaigns {
		s.campaigns = append(s.campaigns, s.createCampaign(tb, c))
	}
	owner := env.Owner(tb, "acme") // a person starts them: the key would need an agent policy
	for _, id := range s.campaigns {
		_, err := owner.CampaignsStart(ctx, api.CampaignsStartParams{ID: id})
		require.NoError(tb, err)
	}
	return s
}

func (s *sim) now() time.Time { return s.clock }

func (s *sim) query(tb testing.TB, f func(ctx context.Context, tx pgx.Tx) error) {
	tb.Helper()
	require.NoError(tb, db.WithOrgTx(context.Background(), s.env.DB.Pool, s.org, f))
}

func (s *sim) exec(tb testing.TB, sql string, args ...any) {
	tb.Helper()
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
}

// insertMailboxes writes the mailboxes in one statement, every one logging in to srv with the same
// credentials (sealed for each mailbox, as the API stores them).
func (s *sim) insertMailboxes(tb testing.TB, k *seal.Keyring, srv simSMTP) {
	tb.Helper()
	n := s.spec.mailboxes
	ids, emails, zones := make([]uuid.UUID, n), make([]string, n), make([]string, n)
	caps, gaps, smtpPasswords, imapPasswords := make([]int32, n), make([]int32, n), make([][]byte, n), make([][]byte, n)
	tag0, tag1 := make([]bool, n), make([]bool, n)
	for i := range n {
		id, err := uuid.NewV7()
		require.NoError(tb, err)
		ids[i], emails[i], zones[i] = id, fmt.Sprintf("sender%04d@outflow.test", i), simZones[i%len(simZones)]
		caps[i], gaps[i] = simCap(i), simGap(i)
		// The pipeline opens both credentials; the IMAP one is never dialed here.
		smtpPasswords[i] = mailbox.SealPassword(k, s.org, id, mailbox.ServiceSMTP, srv.pass)
		imapPasswords[i] = mailbox.SealPassword(k, s.org, id, mailbox.ServiceIMAP, srv.pass)
		tag0[i], tag1[i] = i < n*6/10, i >= n*4/10
		if i >= n*3/10 && i < n*5/10 {
			s.explicit = append(s.explicit, id)
		}
	}
	host, port := splitHostPort(tb, srv.addr)
	s.exec(tb, `INSERT INTO mailboxes (organization_id, id, email, name, provider, campaign_limit, min_wait_time, timezone,
		tags, smtp_host, smtp_port, smtp_username, smtp_security, smtp_password, imap_host, imap_port, imap_username,
		imap_security, imap_password)
		SELECT $1, u.id, u.email, 'Sender ' || u.i, 'smtp_imap', u.cap, u.gap, u.zone,
		  CASE WHEN u.t0 AND u.t1 THEN ARRAY[$2::uuid, $3::uuid] WHEN u.t0 THEN ARRAY[$2::uuid] WHEN u.t1 THEN ARRAY[$3::uuid]
		    ELSE '{}'::uuid[] END,
		  $4, $5, $6, 'none', u.smtp, $4, 993, $6, 'tls', u.imap
		FROM unnest($7::uuid[], $8::text[], $9::int[], $10::int[], $11::text[], $12::bool[], $13::bool[], $14::bytea[], $15::bytea[])
		  WITH ORDINALITY AS u(id, email, cap, gap, zone, t0, t1, smtp, imap, i)`,
		s.org, s.tags[0], s.tags[1], host, port, srv.user, ids, emails, caps, gaps, zones, tag0, tag1, smtpPasswords, imapPasswords)
}

func splitHostPort(tb testing.TB, addr string) (string, int) {
	tb.Helper()
	host, p, err := net.SplitHostPort(addr)
	require.NoError(tb, err)
	port, err := strconv.Atoi(p)
	require.NoError(tb, err)
	return host, port
}

// insertContacts writes the contacts in one statement; contact n carries its number in custom field "n".
func (s *sim) insertContacts(tb testing.TB) {
	tb.Helper()
	s.exec(tb, `INSERT INTO contacts (organization_id, id, email, first_name, last_name, company, custom_fields, source)
		SELECT $1, gen_random_uuid(), format('lead%s@example.net', g), 'Lead', format('No. %s', g), format('Company %s', g % 97),
		  jsonb_build_object('n', g), 'import'
		FROM generate_series(0, $2 - 1) g`, s.org, s.spec.contacts)
}

// simSteps is every campaign's sequence: an opener in HTML and text with two links (tracked, as the sim's
// campaigns track opens and links), a thread_reply follow-up a day later, and a last note with its own
// subject two days after that.
func simSteps() []api.CampaignStepCreate {
	return []api.CampaignStepCreate{
		{Subject: api.NewOptString("Quick question for {{.Company}}"),
			BodyHTML: api.NewOptString(`<p>Hi {{.FirstName}}, a first note about <a href="https://acme.example/product">our product</a>.</p>` +
				`<p>The <a href="https://acme.example/pricing?plan=team">pricing</a> is simple.</p>`),
			BodyPlain: api.NewOptString("Hi {{.FirstName}}, a first note about our product: https://acme.example/product"),
			WaitAfter: api.NewOptInt(0)},
		{BodyPlain: api.NewOptString("Following up on my note, {{.FirstName}}."), WaitAfter: api.NewOptInt(1),
			ThreadReply: api.NewOptBool(true)},
		{Subject: api.NewOptString("One last idea, {{.FirstName}}"), BodyPlain: api.NewOptString("Closing the loop."),
			WaitAfter: api.NewOptInt(2), ThreadReply: api.NewOptBool(false)},
	}
}

// createCampaign creates the campaign through the API and adds its leads in one statement.
func (s *sim) createCampaign(tb testing.TB, c simCampaign) uuid.UUID {
	tb.Helper()
	req := &api.CampaignCreate{Name: c.name, Steps: simSteps(), Timezone: api.NewOptString(c.zone),
		DailyLimit: api.NewOptInt(c.dailyLimit), RotationMode: api.NewOptCampaignCreateRotationMode(c.rotation),
		OpenTracking: api.NewOptBool(true), LinkTracking: api.NewOptBool(true)}
	if c.legacy {
		days, first := 0, span{}
		for d, spans := range c.week {
			if len(spans) > 0 {
				days |= 1 << ((d + 6) % 7) // bit 0 is Monday
				first = spans[0]
			}
		}
		req.Days = api.NewOptInt(days)
		req.StartTime = api.NewOptString(fmt.Sprintf("%02d:%02d", first.start/60, first.start%60))
		req.EndTime = api.NewOptString(fmt.Sprintf("%02d:%02d", first.end/60, first.end%60))
	} else {
		req.ScheduleWindows = make(api.ScheduleWindows, 7)
		for d, spans := range c.week {
			req.ScheduleWindows[d] = []api.ScheduleWindowsItemItem{}
			for _, sp := range spans {
				req.ScheduleWindows[d] = append(req.ScheduleWindows[d], api.ScheduleWindowsItemItem{
					Start: api.NewOptInt(sp.start), End: api.NewOptInt(sp.end)})
			}
		}
	}
	if c.maxNew > 0 {
		req.MaxNewLeadsPerDay = api.NewOptInt(c.maxNew)
	}
	if c.ramp != [3]int{} {
		req.RampEnabled = api.NewOptBool(true)
		req.RampStart, req.RampIncrement, req.RampCeiling = api.NewOptInt(c.ramp[0]), api.NewOptInt(c.ramp[1]), api.NewOptInt(c.ramp[2])
	}
	if c.startDays > 0 {
		req.StartDate = api.NewOptNilDateTime(s.start.AddDate(0, 0, c.startDays))
	}
	if c.tag >= 0 {
		req.EmailTagIds = []uuid.UUID{s.tags[c.tag]}
	} else {
		req.SenderStrategy = api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit)
		for i, id := range s.explicit {
			req.Senders = append(req.Senders, api.CampaignSenderInput{EmailAccountID: id, Weight: api.NewOptInt(1 + i%3)})
		}
	}
	got, err := s.c.CampaignsCreate(context.Background(), req, api.CampaignsCreateParams{})
	require.NoError(tb, err)
	s.exec(tb, `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
		SELECT $1, $2, id FROM contacts WHERE organization_id = $1 AND (custom_fields ->> 'n')::int >= $3 AND (custom_fields ->> 'n')::int < $4`,
		s.org, got.ID, c.contacts[0], c.contacts[1])
	return got.ID
}

// week runs the simulated week event by event: the engine plans what is due at the clock, the pipeline works
// the sends due at the clock, and the clock moves to the next lead due or queued send (at most maxStep on), up
// to and including the week's end.
func (s *sim) week(tb testing.TB) {
	tb.Helper()
	for !s.clock.After(s.end) {
		began := time.Now()
		st, err := s.eng.RunDue(context.Background(), s.jobs)
		s.scheduler += time.Since(began)
		require.NoError(tb, err)
		s.events++
		s.sends += st.Sends
		s.looked += st.Leads
		s.passes += st.Passes
		s.lateness = append(s.lateness, st.Lateness...)
		s.work(tb)
		next := s.next(tb)
		if s.clock.Before(s.end) && next.After(s.end) {
			next = s.end
		}
		s.clock = next
	}
}

// work attempts every queued send due at the clock once, as the send workers would, simWorkers at a time.
func (s *sim) work(tb testing.TB) {
	tb.Helper()
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, mailbox_id, not_before FROM send_tasks
			WHERE organization_id = $1 AND id > $2 AND status = 'queued' ORDER BY id`, s.org, s.lastTask)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			var t simTask
			if err := rows.Scan(&id, &t.mailbox, &t.notBefore); err != nil {
				return err
			}
			s.open[id], s.lastTask = t, id
		}
		return rows.Err()
	})
	var due []uuid.UUID
	for id, t := range s.open {
		if !t.notBefore.After(s.clock) {
			due = append(due, id)
		}
	}
	if len(due) == 0 {
		return
	}
	queue := make(chan uuid.UUID)
	errs := make(chan error, len(due))
	var wg sync.WaitGroup
	outbox := events.NewOutbox(s.jobs)
	for range simWorkers {
		wg.Go(func() {
			for id := range queue {
				if _, err := s.pipe.Attempt(context.Background(), outbox, sending.Args{OrganizationID: s.org, TaskID: id,
					MailboxID: s.open[id].mailbox}); err != nil {
					errs <- fmt.Errorf("task %s: %w", id, err)
				}
			}
		})
	}
	for _, id := range due {
		queue <- id
	}
	close(queue)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(tb, err)
	}
	// What is still queued (a cap or gap the claim found) stays open with its new time.
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, status, not_before FROM send_tasks WHERE organization_id = $1 AND id = ANY($2)`, s.org, due)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			var status string
			var notBefore time.Time
			if err := rows.Scan(&id, &status, &notBefore); err != nil {
				return err
			}
			if status != "queued" {
				delete(s.open, id)
				continue
			}
			t := s.open[id]
			t.notBefore = notBefore
			s.open[id] = t
		}
		return rows.Err()
	})
}

// next is when something happens after the clock: the earliest lead due in an active campaign or queued send,
// at most maxStep on.
func (s *sim) next(tb testing.TB) time.Time {
	tb.Helper()
	next := s.clock.Add(maxStep)
	var due *time.Time
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		// The next lead due, or the next end of a campaign's park (its leads due before it are due then).
		return tx.QueryRow(ctx, `SELECT least(min(l.due_at), min(c.parked_until) FILTER (WHERE c.parked_until > $2))
			FROM campaigns c
			CROSS JOIN LATERAL (SELECT min(due_at) AS due_at FROM campaign_leads
			  WHERE organization_id = c.organization_id AND campaign_id = c.id AND state IN ('pending', 'active')
			    AND due_at IS NOT NULL AND task_id IS NULL AND due_at > $2) l
			WHERE c.organization_id = $1 AND c.status = 'active'`, s.org, s.clock).Scan(&due)
	})
	if due != nil && due.Before(next) {
		next = *due
	}
	for _, t := range s.open {
		if t.notBefore.After(s.clock) && t.notBefore.Before(next) {
			next = t.notBefore
		}
	}
	return next
}

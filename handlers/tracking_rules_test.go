package handlers_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// The classification rules of part 1 through the tracking endpoints, each at its edges: the event's time is
// the tracking clock's, set to the millisecond, and the dispatch time is the send's sent_at.

const ms = time.Millisecond

func TestTrackingJudgesOpensAndClicksAtTheEdgesOfTheirMachineWindows(t *testing.T) {
	t.Parallel()
	for name, w := range map[string]struct{ open, click time.Duration }{
		"default windows":  {60 * time.Second, 30 * time.Second},
		"shortest windows": {time.Second, time.Second},
		"longest windows":  {900 * time.Second, 900 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newTrackRig(t, func(c *config.Config) {
				c.OpenMachineWindow, c.ClickMachineWindow = w.open, w.click
				c.ProbableScannerWindow = time.Hour // wider than both, as it must be
			})
			sent := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
			for _, tc := range []struct {
				after   time.Duration
				verdict string
			}{{-ms, "machine"}, {0, "machine"}, {ms, "human"}} {
				task := r.send(t, sent)
				r.open(t, sent.Add(w.open+tc.after), task, fromReader, browserUA)
				r.click(t, sent.Add(w.click+tc.after), task, 0, fromReader, browserUA)
				rule := map[string][2]string{"machine": {"open_machine_window", "click_machine_window"}, "human": {"human", "human"}}[tc.verdict]
				got := r.judgements(t, task)
				slices.SortFunc(got, func(a, b judged) int { return -strings.Compare(a.Kind, b.Kind) })
				require.Equal(t, []judged{
					{Kind: "open", Link: -1, Verdict: tc.verdict, Rule: rule[0]},
					{Kind: "click", Link: 0, Verdict: tc.verdict, Rule: rule[1], Ticket: true},
				}, got, "window %s: an event %s after it", name, tc.after)
			}
		})
	}
}

func TestTrackingMachineOpensCountOnceAndAHumanOpenUpgradesThem(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	sent := time.Now().Add(-2 * time.Hour)
	late := sent.Add(time.Hour)
	task := r.send(t, sent)

	r.open(t, late, task, fromReader, imageProxyUA)
	r.open(t, late.Add(time.Second), task, fromProxy, browserUA)
	r.open(t, late.Add(2*time.Second), task, fromReader, "")
	require.Equal(t, []judged{
		{Kind: "open", Link: -1, Verdict: "machine", Rule: "privacy_proxy"},
		{Kind: "open", Link: -1, Verdict: "machine", Rule: "privacy_proxy"},
		{Kind: "open", Link: -1, Verdict: "machine", Rule: "missing_user_agent"},
	}, r.judgements(t, task), "a proxy by its user agent or its network, and a fetch without a user agent, are machines")
	opened, _ := r.stamps(t, task)
	require.Nil(t, opened, "a machine open stamps nothing")
	p := r.progress(t)
	require.Equal(t, 0, p.Opened)
	require.Equal(t, 1, p.MachineOpened.Value, "machine opens of one send count once")
	require.Empty(t, r.eventData(t, "campaign.email_opened"), "campaign.email_opened fires for people only")

	human := late.Add(time.Minute).Truncate(time.Millisecond)
	r.open(t, human, task, fromReader, browserUA)
	r.open(t, human.Add(time.Minute), task, fromReader, browserUA)
	require.Equal(t, "human", r.judgements(t, task)[3].Rule)
	opened, _ = r.stamps(t, task)
	require.NotNil(t, opened)
	require.True(t, human.Equal(*opened), "the first human open stamps opened_at")
	p = r.progress(t)
	require.Equal(t, 1, p.Opened, "a send's human opens count once")
	require.Equal(t, 0, p.MachineOpened.Value, "the human open upgraded the machine open")
	events := r.eventData(t, "campaign.email_opened")
	require.Len(t, events, 1, "one campaign.email_opened per send")
	require.Equal(t, map[string]any{"campaign_id": r.camp.String(), "campaign_name": "Spring launch",
		"contact_id": r.lead.String(), "email": "ada@example.net", "step_id": r.step.String(), "step_name": "Step 1",
		"task_id": task.String(), "message_id": "<" + task.String() + "@acme.example>", "mailbox_id": r.box.String(),
		"email_account_id": r.box.String(), "from_email": "sales@acme.example",
		"opened_at": human.UTC().Format(time.RFC3339Nano)}, events[0])
	require.Equal(t, []string{"email_opened"}, r.emailActivities(t), "the open is in the contact's activity log")

	second := r.send(t, sent)
	r.open(t, late, second, fromReader, browserUA)
	p = r.progress(t)
	require.Equal(t, 2, p.Opened, "a first open that is a person's counts without an upgrade")
	require.Equal(t, 0, p.MachineOpened.Value)
}

func TestTrackingABurstIsTwoLinksOfOneSendFromOneSourceWithinTheBurstWindow(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	burst := tracking.DefaultWindows().Burst
	sent := time.Now().Add(-2 * time.Hour)
	at := sent.Add(time.Hour)
	human := judged{Kind: "click", Verdict: "human", Rule: "human", Ticket: true}
	machine := judged{Kind: "click", Verdict: "machine", Rule: "burst", Ticket: true}
	link := func(j judged, index int) judged { j.Link = index; return j }

	for _, tc := range []struct {
		name       string
		gap        time.Duration
		second     int
		from       string
		sameBatch  bool
		first, and judged
	}{
		{"another link 1 ms inside the window", burst - ms, 1, fromReader, true, link(machine, 0), link(machine, 1)},
		{"another link at the window's edge", burst, 1, fromReader, false, link(machine, 0), link(machine, 1)},
		{"another link 1 ms after the window", burst + ms, 1, fromReader, false, link(human, 0), link(human, 1)},
		{"the same link twice", time.Second, 0, fromReader, false, link(human, 0), link(human, 0)},
		{"another link from another source", time.Second, 1, fromOffice, false, link(human, 0), link(human, 1)},
		{"another link from the same network", time.Second, 1, fromNeighbour, false, link(machine, 0), link(machine, 1)},
	} {
		task := r.send(t, sent)
		r.click(t, at, task, 0, fromReader, browserUA)
		if !tc.sameBatch {
			require.Equal(t, []judged{link(human, 0)}, r.judgements(t, task), tc.name+": the first click alone is a person's")
		}
		r.click(t, at.Add(tc.gap), task, tc.second, tc.from, browserUA)
		require.Equal(t, []judged{tc.first, tc.and}, r.judgements(t, task), tc.name)
	}
	require.Empty(t, r.eventData(t, "campaign.email_clicked"), "no click has had its effects yet")
}

func TestTrackingScannersAreMachinesAndGetNoTicketAndProbableScannersOnlyWithinTheirWindow(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	probable := tracking.DefaultWindows().ProbableScanner
	sent := time.Now().Add(-2 * time.Hour).Truncate(time.Second)

	task := r.send(t, sent)
	late := sent.Add(time.Hour)
	require.Equal(t, trackedPricing, r.click(t, late, task, 0, fromScanner, browserUA), "a scanner is redirected without the ticket")
	r.open(t, late, task, fromScanner, browserUA)
	require.Equal(t, []judged{
		{Kind: "click", Link: 0, Verdict: "machine", Rule: "scanner"},
		{Kind: "open", Link: -1, Verdict: "machine", Rule: "scanner"},
	}, r.judgements(t, task), "a recognised scanner network is a machine however late, with a browser's user agent")

	for _, tc := range []struct {
		after   time.Duration
		verdict judged
	}{
		{probable - ms, judged{Kind: "click", Verdict: "machine", Rule: "probable_scanner"}},
		{probable, judged{Kind: "click", Verdict: "machine", Rule: "probable_scanner"}},
		{probable + ms, judged{Kind: "click", Verdict: "human", Rule: "human"}},
	} {
		task := r.send(t, sent)
		require.Equal(t, trackedPricing, r.click(t, sent.Add(tc.after), task, 0, fromProbable, browserUA),
			"a probable scanner gets no ticket, even when its click counts as a person's")
		require.Equal(t, []judged{tc.verdict}, r.judgements(t, task), "a probable scanner %s after dispatch", tc.after)
	}

	task = r.send(t, sent)
	at := sent.Add(time.Hour)
	location := r.click(t, at, task, 0, fromReader, browserUA)
	u, err := url.Parse(location)
	require.NoError(t, err)
	require.Equal(t, "plans", u.Fragment, "the link's fragment stays last")
	require.Equal(t, "utm_source=outflow&q=a%20b&ofclid="+u.Query().Get("ofclid"), u.RawQuery, "the link's own query is kept as it was")
	ticket, err := r.signer.Parse(u.Query().Get("ofclid"), tracking.KindTicket)
	require.NoError(t, err, "the ticket is signed by the deployment")
	require.Equal(t, tracking.Token{Kind: tracking.KindTicket, OrganizationID: r.org, TaskID: task, LinkIndex: 0,
		At: at.Truncate(time.Second).UTC()}, ticket)
	require.Equal(t, []judged{{Kind: "click", Link: 0, Verdict: "human", Rule: "human", Ticket: true}}, r.judgements(t, task))
}

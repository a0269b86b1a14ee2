package engine_test

import (
	"bytes"
	"net/mail"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

func TestAWeekOfThreeCampaignsSharingMailboxesKeepsEveryCapGapWindowAndQuota(t *testing.T) {
	srv := mailtest.NewSMTPServer(t, user, smtpPass, mailtest.NoTLS())
	s := newSim(t, weekSpec(1), simSMTP{addr: srv.Addr, user: user, pass: smtpPass})
	began := time.Now()
	s.week(t)
	t.Logf("simulated week: %d events, %d sends in %s (engine %s, %d passes, %d leads looked at)", s.events, s.sends,
		time.Since(began).Round(time.Millisecond), s.scheduler.Round(time.Millisecond), s.passes, s.looked)

	r := s.check(t)
	require.Zero(t, len(r.violations), "%d violations, the first:\n%s", len(r.violations), first(r.violations, 10))
	require.Equal(t, s.sends, r.sends, "every send the engine enqueued went out within the week")
	require.LessOrEqual(t, p99(s.lateness), time.Second, "sends are planned when their leads are due")
	require.Less(t, s.looked, 10*5000, "a waiting lead is looked at about once a day, not once for every send")

	// The rules bound, so the checks above could have failed: mailboxes filled their days and sent at their
	// minimum gap, each campaign reached its own limit, and leads finished or wait for the reasons given.
	require.Positive(t, r.capDays, "a mailbox reached its campaign_limit")
	require.Positive(t, r.tightGaps, "a mailbox sent exactly min_wait_time after its last send")
	require.Positive(t, r.limitDays["New York"], "New York reached its daily_limit")
	require.Positive(t, r.rampDays["Legacy"], "Legacy reached its ramp")
	require.Positive(t, r.quotaDays["Berlin"], "Berlin reached max_new_leads_per_day")
	require.Positive(t, r.outcomes["completed"], "leads finished all three steps")
	for _, reason := range []string{engine.ReasonCampaignLimit, engine.ReasonRamp, engine.ReasonNewLeadQuota} {
		require.Positive(t, r.outcomes["pending: "+reason], "new leads wait with %q", reason)
	}
	require.Positive(t, r.outcomes["active: "+engine.ReasonFollowUp], "leads wait for their next step")

	// The week held Europe's daylight saving change, and Berlin sent on that day in its windows.
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	_, before := s.start.In(berlin).Zone()
	_, after := s.end.In(berlin).Zone()
	require.NotEqual(t, before, after)
	require.Positive(t, r.days["Berlin"][s.start.AddDate(0, 0, 6).Format(time.DateOnly)])

	// The server received what the pipeline recorded as sent, each message once.
	msgs := srv.Messages()
	require.Len(t, msgs, r.delivered)
	ids := map[string]bool{}
	for _, m := range msgs {
		h, err := mail.ReadMessage(bytes.NewReader(m.Data))
		require.NoError(t, err)
		id := h.Header.Get("Message-Id")
		require.False(t, ids[id], "message %s arrived twice", id)
		ids[id] = true
	}
}

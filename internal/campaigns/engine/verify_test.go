package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

// checks works the queued first-check jobs with v, as a worker would, and answers how many there were.
func (r *rig) checks(t testing.TB, v *verify.Verifier) int {
	t.Helper()
	rows, err := r.env.DB.Pool.Query(context.Background(), `SELECT args FROM river_job WHERE kind = $1 AND state = 'available' ORDER BY id`,
		verify.CheckArgs{}.Kind())
	require.NoError(t, err)
	var all []verify.CheckArgs
	for rows.Next() {
		var raw []byte
		require.NoError(t, rows.Scan(&raw))
		var a verify.CheckArgs
		require.NoError(t, json.Unmarshal(raw, &a))
		all = append(all, a)
	}
	require.NoError(t, rows.Err())
	w := &verify.CheckWorker{Pool: r.env.DB.Pool, Verifier: v}
	for _, a := range all {
		require.NoError(t, w.Work(context.Background(), &river.Job[verify.CheckArgs]{JobRow: &rivertype.JobRow{Attempt: 1}, Args: a}))
	}
	_, err = r.env.DB.Pool.Exec(context.Background(), `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE kind = $1`,
		verify.CheckArgs{}.Kind())
	require.NoError(t, err)
	return len(all)
}

func TestAddressesWithoutAVerdictAreCheckedBeforeTheFirstSendAndARefusedOneIsNeverSent(t *testing.T) {
	r := newRig(t)
	dns := verifytest.NewDNS(t)
	dns.MX("good.test", 10, "mx.good.test")
	v := verify.New(verify.Options{Resolver: verify.NewResolver(dns.Addr), Timeout: 3 * time.Second})
	r.eng = engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now, Verifier: verify.Requests{}})
	r.pipe.OnSettle(r.eng.Settle)
	id := r.campaign(t, twoSteps(), "ada@good.test", "nobody@nomx.test")

	require.Zero(t, r.run(t).Sends, "nothing goes before the addresses are checked")
	for _, e := range []string{"ada@good.test", "nobody@nomx.test"} {
		l := r.lead(t, id, e)
		require.Equal(t, "pending", l.State)
		require.Equal(t, "verifying the address before the first send", l.WaitReason)
	}
	r.advance(2*time.Minute + time.Second)
	require.Zero(t, r.run(t).Sends, "still unchecked: the leads wait again")
	require.Equal(t, 1, r.checks(t, v), "the second request is the first one, still waiting")

	r.advance(2*time.Minute + time.Second)
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, 1, r.work(t))
	msgs := r.smtp.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, []string{"ada@good.test"}, msgs[0].To)
	l := r.lead(t, id, "nobody@nomx.test")
	require.Equal(t, "undeliverable", l.State)
	require.Nil(t, l.Due)
	require.Equal(t, "Verification found the address invalid: nomx.test has no MX, A or AAAA record: it cannot receive mail.", l.Failure)
	require.Equal(t, "active", r.lead(t, id, "ada@good.test").State)

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "the follow-up goes to the valid address only")
	require.Zero(t, r.checks(t, v), "checked contacts are not asked for again")
}

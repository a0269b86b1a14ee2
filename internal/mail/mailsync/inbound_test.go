package mailsync_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
)

// told records what the inbound hook was told, and whether each message was already in the hook's transaction.
type told struct {
	mu       sync.Mutex
	messages []mailsync.Inbound
	visible  []bool
	fail     error
}

func (h *told) hook(ctx context.Context, tx pgx.Tx, _ *events.Outbox, m mailsync.Inbound) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE message_id = $1`, m.MessageID).Scan(&n); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return h.fail
	}
	h.messages = append(h.messages, m)
	h.visible = append(h.visible, n == 1)
	return nil
}

func (h *told) list() ([]mailsync.Inbound, []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]mailsync.Inbound{}, h.messages...), append([]bool{}, h.visible...)
}

func TestEachNewInboundMessageIsToldToTheHookOnceInTheTransactionThatStoresIt(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.imap.Append(t, "INBOX", message("<answer@client.example>", "<sent2@example.com>", "<sent1@example.com> <sent2@example.com>", "Re: Hello", "Yes"))
	r.imap.Append(t, "Sent", message("<sent3@example.com>", "<answer@client.example>", "<sent1@example.com>", "Re: Hello", "Ours"))
	away := strings.Replace(string(message("<away@client.example>", "<sent2@example.com>", "<sent2@example.com>", "Re: Hello", "Away")),
		"Subject:", "Auto-Submitted: auto-replied\r\nSubject:", 1)
	r.imap.Append(t, "Spam", []byte(away))

	h := &told{}
	s := r.syncer(t, 30*time.Second)
	s.OnInbound(h.hook)
	stop := r.start(t, s)
	r.backfilled(t)
	require.NoError(t, stop())

	got, visible := h.list()
	require.Len(t, got, 2, "the Sent folder's message is not inbound")
	require.Equal(t, []bool{true, true}, visible)
	answer := got[0]
	require.Equal(t, r.org, answer.OrganizationID)
	require.Equal(t, r.box, answer.MailboxID)
	require.Equal(t, "<answer@client.example>", answer.MessageID)
	require.Equal(t, "<sent2@example.com>", answer.InReplyTo)
	require.Equal(t, []string{"<sent1@example.com>", "<sent2@example.com>"}, answer.References)
	require.Equal(t, "bob@client.example", answer.FromEmail)
	require.Equal(t, "Re: Hello", answer.Subject)
	require.WithinDuration(t, time.Now(), answer.ReceivedAt, time.Minute)
	require.False(t, answer.OutOfOffice)
	require.Equal(t, "<away@client.example>", got[1].MessageID)
	require.True(t, got[1].OutOfOffice)

	// A message already stored is not told again; a hook that fails keeps its message out of the store.
	h.fail = errors.New("the hook's area is down")
	r.imap.Append(t, "INBOX", message("<later@client.example>", "", "", "Later", "x"))
	s = r.syncer(t, 30*time.Second)
	s.OnInbound(h.hook)
	require.Error(t, s.Run(context.Background(), r.outbox, r.org, r.box))
	require.Zero(t, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<later@client.example>'`))
	h.fail = nil
	stop = r.start(t, s)
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<later@client.example>'`) == 1
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, stop())
	got, _ = h.list()
	require.Len(t, got, 3)
	require.Equal(t, "<later@client.example>", got[2].MessageID)
}

func TestAReportIsToldWithWhatItReportsAndAnyOtherMessageWithout(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	corpus := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "dsn", "testdata", name))
		require.NoError(t, err)
		return b
	}
	// The Exim bounce says Auto-Submitted: auto-replied, as an out-of-office reply does.
	r.imap.Append(t, "INBOX", corpus("exim_hard.eml"))
	r.imap.Append(t, "INBOX", corpus("arf_abuse.eml"))
	r.imap.Append(t, "INBOX", corpus("not_out_of_office.eml"))
	r.imap.Append(t, "INBOX", message("<answer@client.example>", "<sent@example.com>", "<sent@example.com>", "Re: Hello", "Yes"))

	h := &told{}
	s := r.syncer(t, 30*time.Second)
	s.OnInbound(h.hook)
	stop := r.start(t, s)
	r.backfilled(t)
	require.NoError(t, stop())

	got, _ := h.list()
	require.Len(t, got, 4)
	bounce, complaint, away, answer := got[0], got[1], got[2], got[3]
	require.NotNil(t, bounce.Report)
	require.Equal(t, dsn.KindBounce, bounce.Report.Kind)
	require.Equal(t, dsn.ShapeExim, bounce.Report.Shape)
	require.Equal(t, "0193185e-aaaa-7d2b-9f00-1a2b3c4d5e71@example.com", bounce.Report.Original.MessageID)
	require.False(t, bounce.OutOfOffice, "a bounce is not an out-of-office reply")
	require.NotNil(t, complaint.Report)
	require.Equal(t, dsn.KindComplaint, complaint.Report.Kind)
	require.Nil(t, away.Report)
	require.True(t, away.OutOfOffice)
	require.Nil(t, answer.Report)
	for _, m := range got {
		require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND message_id = $2`, m.ID, m.MessageID),
			"ID names the stored message")
	}
}

package mailsync

import (
	"context"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// MaxSeenBatch bounds the messages one read/unread change names.
const MaxSeenBatch = 1000

// SeenArgs relays a read/unread change of stored messages of one mailbox to its IMAP server.
type SeenArgs struct {
	OrganizationID uuid.UUID   `json:"organization_id"`
	MailboxID      uuid.UUID   `json:"mailbox_id"`
	MessageIDs     []uuid.UUID `json:"message_ids"`
	Seen           bool        `json:"seen"`
}

// Kind names the job.
func (SeenArgs) Kind() string { return "mailbox_seen" }

// InsertOpts: the relay is best effort; a few tries over a few minutes, then the server's flags win at the
// next sync.
func (SeenArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// MarkSeen records, in tx, that messages of one mailbox were read (seen) or marked unread, refreshes their
// threads' summaries, emits inbox.email_updated for each message it changed, and queues the relay of the
// change to the mailbox's server in the same transaction. It answers how many stored messages it changed
// (a message already in that state is not changed).
func MarkSeen(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org, mailboxID uuid.UUID, ids []uuid.UUID, seen bool) (int, error) {
	if len(ids) > MaxSeenBatch {
		return 0, fmt.Errorf("mailsync: at most %d messages per change", MaxSeenBatch)
	}
	rows, err := queries.InboxMessagesMarkSeen(ctx, tx, dbq.InboxMessagesMarkSeenParams{OrganizationID: org, MailboxID: mailboxID, Ids: ids, Seen: seen})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	ids = make([]uuid.UUID, len(rows))
	msgs := make([]changed, len(rows))
	for i, r := range rows {
		ids[i], msgs[i] = r.ID, changed(r)
	}
	if err := settle(ctx, tx, events.NewOutbox(jobs), org, events.InboxEmailUpdated, msgs, false); err != nil {
		return 0, err
	}
	_, err = jobs.InsertTx(ctx, tx, SeenArgs{OrganizationID: org, MailboxID: mailboxID, MessageIDs: ids, Seen: seen}, nil)
	return len(rows), err
}

// SeenWorker works SeenArgs with its own short IMAP session (the sync's session belongs to its job).
type SeenWorker struct {
	river.WorkerDefaults[SeenArgs]
	Syncer *Syncer
}

// Timeout bounds one relay: a login and a STORE per folder.
func (w *SeenWorker) Timeout(*river.Job[SeenArgs]) time.Duration { return time.Minute }

// Work stores \Seen on (or removes it from) the messages where they still are: a folder renumbered since
// (another UIDVALIDITY) is skipped, its messages are not those any more. A revoked or inactive mailbox has
// nothing to relay to.
func (w *SeenWorker) Work(ctx context.Context, job *river.Job[SeenArgs]) error {
	s, a := w.Syncer, job.Args
	var located []dbq.InboxMessagesLocateRow
	c, err := s.relaySession(ctx, a.OrganizationID, a.MailboxID, func(ctx context.Context, tx pgx.Tx) (bool, error) {
		var err error
		located, err = queries.InboxMessagesLocate(ctx, tx, dbq.InboxMessagesLocateParams{OrganizationID: a.OrganizationID,
			MailboxID: a.MailboxID, Ids: a.MessageIDs})
		return len(located) > 0, err
	})
	if err != nil || c == nil {
		return err
	}
	defer func() { _ = c.Close() }()
	type place struct {
		folder      string
		uidValidity int64
	}
	byFolder := map[place][]imap.UID{}
	for _, l := range located {
		if l.Seen == a.Seen { // a later change may have reversed this one; the stored state is the one to relay
			byFolder[place{l.Folder, l.UidValidity}] = append(byFolder[place{l.Folder, l.UidValidity}], imap.UID(l.Uid))
		}
	}
	op := imap.StoreFlagsDel
	if a.Seen {
		op = imap.StoreFlagsAdd
	}
	for p, uids := range byFolder {
		sel, err := c.Select(p.folder, nil).Wait()
		if err != nil {
			return fmt.Errorf("mailsync: select %s: %w", p.folder, err)
		}
		if int64(sel.UIDValidity) != p.uidValidity {
			continue
		}
		if err := c.Store(imap.UIDSetNum(uids...), &imap.StoreFlags{Op: op, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
			return fmt.Errorf("mailsync: store \\Seen in %s: %w", p.folder, err)
		}
	}
	return c.Logout().Wait()
}

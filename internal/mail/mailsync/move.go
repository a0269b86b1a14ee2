package mailsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// MaxMoveBatch bounds the messages one move names.
const MaxMoveBatch = 1000

// maxMoveRelay bounds the pending moves one relay job makes (a later job makes the rest).
const maxMoveRelay = 1000

// MoveArgs relays the pending moves of one mailbox's stored messages to its IMAP server.
type MoveArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	MailboxID      uuid.UUID `json:"mailbox_id"`
}

// Kind names the job.
func (MoveArgs) Kind() string { return "mailbox_move" }

// InsertOpts: a few tries over a few minutes; a move still pending is made by the mailbox's next relay job.
func (MoveArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// Move moves stored messages (of one or several mailboxes) to their mailbox's folder of role (inbox, archive
// or trash), in tx: each takes the role at once and names the destination folder in move_to until the relay
// has moved it on the server, their threads' summaries are refreshed, inbox.email_updated is emitted for each
// message whose folder changed, and one MoveArgs job per mailbox is queued. It answers the ids whose folder
// changed (a message already there, or an id of no stored message, is not). A mailbox with no synced folder
// of that role is a 409 folder_unavailable naming it, and nothing moves.
func Move(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org uuid.UUID, ids []uuid.UUID, role string) ([]uuid.UUID, error) {
	switch role {
	case "inbox", "archive", "trash":
	default:
		return nil, apierror.BadRequest("invalid_folder", "folder must be inbox, archive or trash; got "+role+".")
	}
	if len(ids) > MaxMoveBatch {
		return nil, fmt.Errorf("mailsync: at most %d messages per move", MaxMoveBatch)
	}
	missing, err := queries.InboxMoveUnavailable(ctx, tx, dbq.InboxMoveUnavailableParams{OrganizationID: org, Ids: ids, Role: role})
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.Email
		}
		return nil, apierror.Conflict("folder_unavailable", fmt.Sprintf("Mailbox %s has no %s folder synced, so its messages cannot be moved there.",
			strings.Join(names, ", "), role)).WithFix("Create the folder on the mail server (or leave those messages out); the next sync finds it.")
	}
	rows, err := queries.InboxMessagesMove(ctx, tx, dbq.InboxMessagesMoveParams{OrganizationID: org, Ids: ids, Role: role})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	moved := make([]uuid.UUID, len(rows))
	msgs := make([]changed, len(rows))
	mailboxes := map[uuid.UUID]bool{}
	var relays []river.InsertManyParams
	for i, r := range rows {
		moved[i], msgs[i] = r.ID, changed(r)
		if !mailboxes[r.MailboxID] {
			mailboxes[r.MailboxID] = true
			relays = append(relays, river.InsertManyParams{Args: MoveArgs{OrganizationID: org, MailboxID: r.MailboxID}})
		}
	}
	if err := settle(ctx, tx, events.NewOutbox(jobs), org, events.InboxEmailUpdated, msgs, false); err != nil {
		return nil, err
	}
	if _, err := jobs.InsertManyTx(ctx, tx, relays); err != nil {
		return nil, err
	}
	return moved, nil
}

// MoveWorker works MoveArgs with its own short IMAP session.
type MoveWorker struct {
	river.WorkerDefaults[MoveArgs]
	Syncer *Syncer
}

// Timeout bounds one relay: a login and a move per source and destination folder.
func (w *MoveWorker) Timeout(*river.Job[MoveArgs]) time.Duration { return time.Minute }

// Work makes the mailbox's pending moves on the server: UID MOVE where the server offers MOVE, else UID COPY,
// STORE \Deleted and UID EXPUNGE (UIDPLUS; a server with neither is not asked, since a plain EXPUNGE would
// also remove messages another client marked deleted). Where the server reports the new UID (COPYUID), the
// row takes its new place in place and keeps its id; where it does not, the destination's sync adopts the
// row by its Message-ID. A message in a folder renumbered since is skipped (its folder's sync starts over).
// Every pending move of the mailbox is made, not only those of the job that asked, so a relay that failed is
// made by the next.
func (w *MoveWorker) Work(ctx context.Context, job *river.Job[MoveArgs]) error {
	s, a := w.Syncer, job.Args
	var pending []dbq.InboxMovesPendingRow
	c, err := s.relaySession(ctx, a.OrganizationID, a.MailboxID, func(ctx context.Context, tx pgx.Tx) (bool, error) {
		var err error
		pending, err = queries.InboxMovesPending(ctx, tx, dbq.InboxMovesPendingParams{OrganizationID: a.OrganizationID,
			MailboxID: a.MailboxID, RowLimit: maxMoveRelay})
		return len(pending) > 0, err
	})
	if err != nil || c == nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if !c.Caps().Has(imap.CapMove) && !c.Caps().Has(imap.CapUIDPlus) {
		s.Logger.Warn("mailsync: the server offers neither MOVE nor UIDPLUS; moves stay local", slog.String("mailbox_id", a.MailboxID.String()))
		return c.Logout().Wait()
	}
	type route struct {
		from, to    string
		uidValidity int64
	}
	routes := map[route][]dbq.InboxMovesPendingRow{}
	var order []route
	for _, p := range pending {
		r := route{p.Folder, p.MoveTo, p.UidValidity}
		if routes[r] == nil {
			order = append(order, r)
		}
		routes[r] = append(routes[r], p)
	}
	for _, r := range order {
		sel, err := c.Select(r.from, nil).Wait()
		if err != nil {
			return fmt.Errorf("mailsync: select %s: %w", r.from, err)
		}
		if int64(sel.UIDValidity) != r.uidValidity {
			continue
		}
		rows := routes[r]
		uids := make([]imap.UID, len(rows))
		for i, p := range rows {
			uids[i] = imap.UID(p.Uid)
		}
		data, err := c.Move(imap.UIDSetNum(uids...), r.to).Wait()
		if err != nil {
			return fmt.Errorf("mailsync: move from %s to %s: %w", r.from, r.to, err)
		}
		if err := s.tx(ctx, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			return landed(ctx, tx, events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx)), a.OrganizationID, r.to, rows, data)
		}); err != nil {
			return err
		}
	}
	return c.Logout().Wait()
}

// landed records where a relayed move put rows (data is the server's answer): in place where COPYUID named
// the new UID; left for the destination's sync to adopt where it did not but the message has a Message-ID;
// deleted (inbox.email_deleted) where neither holds, or another row already holds the new place.
func landed(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, org uuid.UUID, dest string, rows []dbq.InboxMovesPendingRow, data *imapclient.MoveData) error {
	newUID := map[imap.UID]imap.UID{}
	if src, ok := data.SourceUIDs.(imap.UIDSet); ok {
		dst, _ := data.DestUIDs.(imap.UIDSet)
		from, okFrom := src.Nums()
		to, okTo := dst.Nums()
		if okFrom && okTo && len(from) == len(to) {
			for i := range from {
				newUID[from[i]] = to[i]
			}
		}
	}
	var lost []changed
	for _, p := range rows {
		uid, ok := newUID[imap.UID(p.Uid)]
		if ok {
			n, err := queries.InboxMessageMoved(ctx, tx, dbq.InboxMessageMovedParams{OrganizationID: org, ID: p.ID, Folder: dest,
				UidValidity: int64(data.UIDValidity), Uid: int64(uid), FromFolder: p.Folder, FromUid: p.Uid})
			if err != nil {
				return err
			}
			if n == 1 {
				continue
			}
		} else if p.MessageID != "" {
			continue
		}
		gone, err := queries.InboxMessageMoveLost(ctx, tx, dbq.InboxMessageMoveLostParams{OrganizationID: org, ID: p.ID, Folder: dest,
			FromFolder: p.Folder, FromUid: p.Uid})
		if err != nil {
			return err
		}
		for _, g := range gone {
			lost = append(lost, changed(g))
		}
	}
	return settle(ctx, tx, outbox, org, events.InboxEmailDeleted, lost, true)
}

// relaySession opens a short IMAP session to the mailbox for a relay job, after load (run in an organization
// transaction) says there is something to relay. It answers a nil client, and no error, when there is
// nothing to do: no such mailbox, one not active, one that needs a new consent, or nothing loaded.
func (s *Syncer) relaySession(ctx context.Context, org, mailboxID uuid.UUID, load func(context.Context, pgx.Tx) (bool, error)) (*imapclient.Client, error) {
	var m dbq.Mailbox
	work := false
	err := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if m, err = queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: mailboxID}); err != nil {
			return err
		}
		work, err = load(ctx, tx)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (m.Status != "active" || !work) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	_, srv, err := s.Credentials.Servers(ctx, events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx)), m)
	if errors.Is(err, mailbox.ErrNeedsConsent) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.Dialer.IMAP(ctx, srv, nil)
}

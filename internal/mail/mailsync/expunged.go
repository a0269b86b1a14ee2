package mailsync

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// expunged deletes the stored messages the server no longer has (expunged by another client, or moved away
// by one), among the newest flagWindow stored before this pass: it asks the server which UIDs of that range
// it still has (UID SEARCH), and deletes the others with inbox.email_deleted, refreshing (and dropping, when
// left empty) their threads. A message with a pending move is left to the move's relay.
func (s *Syncer) expunged(ctx context.Context, c *imapclient.Client, outbox *events.Outbox, org, id uuid.UUID, f folder, sel *imap.SelectData, lastUID int64) error {
	if lastUID == 0 {
		return nil
	}
	var stored []int64
	if err := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		stored, err = queries.InboxFolderUIDs(ctx, tx, dbq.InboxFolderUIDsParams{OrganizationID: org, MailboxID: id, Folder: f.name,
			UidValidity: int64(sel.UIDValidity), RowLimit: flagWindow})
		return err
	}); err != nil || len(stored) == 0 {
		return err
	}
	present := map[imap.UID]bool{}
	if sel.NumMessages > 0 {
		var set imap.UIDSet
		set.AddRange(imap.UID(stored[len(stored)-1]), imap.UID(lastUID))
		data, err := c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{set}}, nil).Wait()
		if err != nil {
			return fmt.Errorf("mailsync: search %s: %w", f.name, err)
		}
		for _, u := range data.AllUIDs() {
			present[u] = true
		}
	}
	var gone []int64
	for _, u := range stored {
		if u <= lastUID && !present[imap.UID(u)] {
			gone = append(gone, u)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := queries.InboxMessagesDeleteUIDs(ctx, tx, dbq.InboxMessagesDeleteUIDsParams{OrganizationID: org, MailboxID: id,
			Folder: f.name, UidValidity: int64(sel.UIDValidity), Uids: gone})
		if err != nil {
			return err
		}
		msgs := make([]changed, len(rows))
		for i, r := range rows {
			msgs[i] = changed(r)
		}
		return settle(ctx, tx, outbox, org, events.InboxEmailDeleted, msgs, true)
	})
}

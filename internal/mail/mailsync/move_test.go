package mailsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// pass runs one sync of every folder (a new run) and stops it once the mailbox's sync is stamped.
func (r *rig) pass(t *testing.T) {
	t.Helper()
	before := r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'email_account.synced'`)
	stop := r.start(t, r.syncer(t, 30*time.Second))
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'email_account.synced'`) > before
	}, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, stop())
}

// move moves ids to role in one transaction, queuing the relay (no worker runs it until the test starts them).
func (r *rig) move(t *testing.T, ids []uuid.UUID, role string) []uuid.UUID {
	t.Helper()
	var moved []uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		moved, err = mailsync.Move(ctx, tx, r.outbox.Jobs(), r.org, ids, role)
		return err
	}))
	return moved
}

// onServer is how many messages a folder of the server holds.
func onServer(t *testing.T, r *rig, folder string) uint32 {
	t.Helper()
	sel, err := r.peer(t).Select(folder, nil).Wait()
	require.NoError(t, err)
	return sel.NumMessages
}

func TestAMoveIsRelayedOverMoveOrCopyAndExpungeAndTheMessageKeepsItsID(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]mailtest.Option{
		"move":         {mailtest.Folders("Archive")},
		"copy_expunge": {mailtest.Folders("Archive"), mailtest.NoMove()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, opts...)
			require.Equal(t, name == "move", r.peer(t).Caps().Has(imap.CapMove), "the server offers MOVE only in the move case")
			r.imap.Append(t, "INBOX", message("<mv@client.example>", "", "", "Move me", "x"))
			r.imap.Append(t, "INBOX", message("<stay@client.example>", "<mv@client.example>", "<mv@client.example>", "Re: Move me", "y"))
			r.pass(t)
			id, stay := r.messageID(t, "<mv@client.example>"), r.messageID(t, "<stay@client.example>")

			require.Equal(t, []uuid.UUID{id}, r.move(t, []uuid.UUID{id, uuid.New()}, "archive"), "an unknown id moves nothing")
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder_role = 'archive' AND move_to = 'Archive' AND folder = 'INBOX'`, id))
			require.Empty(t, r.move(t, []uuid.UUID{id}, "archive"), "already there: nothing changes")
			updated := r.events(t, events.InboxEmailUpdated)
			require.Len(t, updated, 1)
			require.Equal(t, id, updated[0].EmailID)
			require.Equal(t, "archive", updated[0].Folder)
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_thread_folders WHERE folder_role = 'archive' AND last_message_id = $1`, id))
			r.summariesAgree(t)

			// The destination syncs before the relay: nothing is there yet, and nothing is stored twice.
			r.pass(t)
			require.Equal(t, 2, r.count(t, `SELECT count(*) FROM inbox_messages`))
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND move_to = 'Archive'`, id), "a pending move is not a deletion")

			// The relay, while this process's sync holds the mailbox and follows INBOX only (so no sync of
			// Archive can take the message in): the row takes the place COPYUID reported.
			before := r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'email_account.synced'`)
			stop := r.start(t, r.syncer(t, 30*time.Second))
			require.Eventually(t, func() bool {
				return r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'email_account.synced'`) > before
			}, 30*time.Second, 20*time.Millisecond)
			r.env.StartWorkers(t)
			require.Eventually(t, func() bool {
				return r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder = 'Archive' AND move_to = ''
					AND uid_validity = (SELECT uid_validity FROM mailbox_folders WHERE name = 'Archive')`, id) == 1
			}, 20*time.Second, 20*time.Millisecond, "the relay records the message's place in Archive in the same row")
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM mailbox_folders WHERE name = 'Archive'
				AND last_uid < (SELECT uid FROM inbox_messages WHERE id = $1)`, id), "recorded by the relay, not by a sync of Archive")
			require.NoError(t, stop())
			require.EqualValues(t, 1, onServer(t, r, "Archive"))
			require.EqualValues(t, 1, onServer(t, r, "INBOX"), "moved, not copied")

			// The destination syncs after the relay (the workers' sync): still one row, the same id.
			require.Eventually(t, func() bool {
				return r.count(t, `SELECT count(*) FROM mailbox_folders WHERE name = 'Archive'
					AND last_uid >= (SELECT uid FROM inbox_messages WHERE id = $1)`, id) == 1
			}, 40*time.Second, 50*time.Millisecond, "the destination is synced past the moved message")
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<mv@client.example>'`))
			require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder_role = 'inbox'`, stay))
			require.Empty(t, r.events(t, events.InboxEmailDeleted))
			require.Len(t, r.events(t, events.InboxEmailReceived), 2, "the moved message is not received again")
			r.summariesAgree(t)
		})
	}
}

// The relay can move a message on the server and fail before it records the new place; the destination's
// sync then meets the message first and adopts the moved row by its Message-ID.
func TestADestinationSyncThatMeetsAMovedMessageFirstAdoptsTheRow(t *testing.T) {
	t.Parallel()
	r := newRig(t, mailtest.Folders("Archive"))
	uid := r.imap.Append(t, "INBOX", message("<mv@client.example>", "", "", "Move me", "x"))
	r.pass(t)
	id := r.messageID(t, "<mv@client.example>")
	require.Equal(t, []uuid.UUID{id}, r.move(t, []uuid.UUID{id}, "trash"))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND move_to = 'Trash'`, id))
	require.Zero(t, r.count(t, `SELECT count(*) FROM inbox_thread_folders WHERE folder_role IN ('all', 'inbox')`), "trash is outside 'all'")
	require.Equal(t, []uuid.UUID{id}, r.move(t, []uuid.UUID{id}, "archive"), "moved on before the relay: the last destination wins")

	peer := r.peer(t)
	_, err := peer.Move(imap.UIDSetNum(uid), "Archive").Wait()
	require.NoError(t, err)
	r.pass(t)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder = 'Archive' AND folder_role = 'archive' AND move_to = ''`, id))
	require.Empty(t, r.events(t, events.InboxEmailDeleted))
	require.Len(t, r.events(t, events.InboxEmailReceived), 1)

	// The relay, run afterwards, has nothing left to move.
	r.env.StartWorkers(t)
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM river_job WHERE kind = 'mailbox_move' AND state = 'completed' AND args->>'mailbox_id' = $1`, r.box.String()) == 2
	}, 20*time.Second, 20*time.Millisecond)
	require.EqualValues(t, 1, onServer(t, r, "Archive"))
	require.EqualValues(t, 0, onServer(t, r, "INBOX"))
	require.EqualValues(t, 0, onServer(t, r, "Trash"))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder = 'Archive'`, id))
	r.summariesAgree(t)
}

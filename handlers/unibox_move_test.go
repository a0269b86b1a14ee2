package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// imapMessageIDs lists the Message-IDs of the messages in a folder of the rig's IMAP server.
func (r *inboxRig) imapMessageIDs(t *testing.T, folder string) []string {
	t.Helper()
	c, err := imapclient.DialStartTLS(r.imap.Addr, &imapclient.Options{TLSConfig: mailtest.ClientTLS()})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Login(rigUser, rigIMAPPass).Wait())
	sel, err := c.Select(folder, nil).Wait()
	require.NoError(t, err)
	if sel.NumMessages == 0 {
		return nil
	}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{Envelope: true}).Collect()
	require.NoError(t, err)
	var out []string
	for _, m := range msgs {
		if m.Envelope == nil { // expunged while the fetch ran: still counted, so a move in flight is not done
			out = append(out, "<expunging>")
			continue
		}
		out = append(out, "<"+m.Envelope.MessageID+">")
	}
	return out
}

func TestUniboxMoveFolderMovesTheMessageOnTheServerAndKeepsItsID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []mailtest.Option
	}{
		{"with MOVE", []mailtest.Option{mailtest.Folders("Archive")}},
		{"with COPY and EXPUNGE", []mailtest.Option{mailtest.Folders("Archive"), mailtest.NoMove()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newInboxRigServing(t, tc.opts)
			ctx := context.Background()
			raw := func(id string) []byte {
				return fmt.Appendf(nil, "From: Bob <bob@client.example>\r\nTo: %s\r\nSubject: Move me\r\nMessage-ID: %s\r\nDate: %s\r\n"+
					"Content-Type: text/plain; charset=utf-8\r\n\r\nHello\r\n", rigUser, id, time.Now().Format(time.RFC1123Z))
			}
			r.imap.Append(t, "INBOX", raw("<keep@client.example>"))
			r.imap.Append(t, "INBOX", raw("<move@client.example>"))
			r.env.StartWorkers(t)
			var ids []uuid.UUID
			require.Eventually(t, func() bool {
				ids = r.messageIDs(t, "<keep@client.example>", "<move@client.example>")
				return len(ids) == 2 && orgInt(t, r.env, r.org, `SELECT count(*) FROM mailbox_folders WHERE role = 'archive'`) == 1
			}, 30*time.Second, 50*time.Millisecond, "the workers sync the messages and find the archive")

			req := &api.UniboxMoveFolderRequest{EmailIds: []uuid.UUID{ids[1]}, Folder: api.UniboxMoveFolderRequestFolderArchive}
			echo, err := r.c.UniboxMoveFolder(ctx, req, api.UniboxMoveFolderParams{})
			require.NoError(t, err)
			require.Equal(t, req, echo, "the request is echoed")
			require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder_role = 'archive'`, ids[1]),
				"the inbox shows it in the archive at once")

			require.Eventually(t, func() bool {
				archive := r.imapMessageIDs(t, "Archive")
				inbox := r.imapMessageIDs(t, "INBOX")
				return len(archive) == 1 && archive[0] == "<move@client.example>" && len(inbox) == 1 && inbox[0] == "<keep@client.example>"
			}, 30*time.Second, 100*time.Millisecond, "the server moved it")
			require.Eventually(t, func() bool {
				return orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder = 'Archive' AND move_to = ''`, ids[1]) == 1
			}, 30*time.Second, 100*time.Millisecond, "the stored message takes its place on the server and keeps its id")
			require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_messages`), "no copy of it appears")
		})
	}
}

func TestUniboxMoveFolderRefusesWhatItCannotMove(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	_, m := r.thread(t, r.box.ID, "Stay", stored{messageID: "<stay@client.example>"})

	_, err := r.c.UniboxMoveFolder(ctx, &api.UniboxMoveFolderRequest{EmailIds: []uuid.UUID{}, Folder: api.UniboxMoveFolderRequestFolderTrash},
		api.UniboxMoveFolderParams{})
	requireAPIError(t, err, 400, "invalid_email_ids")
	// The mailbox has no trash folder synced: nothing moves.
	_, err = r.c.UniboxMoveFolder(ctx, &api.UniboxMoveFolderRequest{EmailIds: m, Folder: api.UniboxMoveFolderRequestFolderTrash}, api.UniboxMoveFolderParams{})
	requireAPIError(t, err, 409, "folder_unavailable")
	// A key limited to another mailbox leaves this mailbox's messages alone; unknown ids are ignored.
	other := r.connect(t, "grace@example.com")
	_, err = r.scopedKey(t, other.ID).UniboxMoveFolder(ctx, &api.UniboxMoveFolderRequest{EmailIds: append(m, uuid.New()),
		Folder: api.UniboxMoveFolderRequestFolderTrash}, api.UniboxMoveFolderParams{})
	require.NoError(t, err)
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder_role = 'inbox' AND move_to = ''`, m[0]))
}

package mailbox_test

import (
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/mail/mailbox"
)

func TestDraftsFoldersAreFoundByTheirAttributeOrTheirUsualNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, "drafts", mailbox.FolderRole(&imap.ListData{Mailbox: "Entwürfe", Attrs: []imap.MailboxAttr{imap.MailboxAttrDrafts}}, true))
	require.Empty(t, mailbox.FolderRole(&imap.ListData{Mailbox: "Entwürfe"}, false), "an unknown name without the attribute is no drafts folder")
	for _, name := range []string{"Drafts", "Draft", "[Gmail]/Drafts", "INBOX.Drafts"} {
		require.Equal(t, "drafts", mailbox.FolderRole(&imap.ListData{Mailbox: name}, false), name)
	}
}

func TestSentFoldersAreFoundByTheirAttributeBeforeTheirUsualNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, "sent", mailbox.FolderRole(&imap.ListData{Mailbox: "Gesendet", Attrs: []imap.MailboxAttr{imap.MailboxAttrSent}}, true))
	for _, name := range []string{"Sent", "Sent Items", "[Gmail]/Sent Mail", "INBOX.Sent Messages"} {
		require.Equal(t, "sent", mailbox.FolderRole(&imap.ListData{Mailbox: name}, false), name)
	}
	require.Empty(t, mailbox.FolderRole(&imap.ListData{Mailbox: "Sent"}, true), "a name is not an attribute")
}

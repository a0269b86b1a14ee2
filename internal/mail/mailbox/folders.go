package mailbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// FolderRole names a folder's role (sent, spam, trash, archive, drafts; "" for none) by its special-use
// attribute (byAttr) or by its usual name: the inbox sync and the send pipeline's Sent folder work must agree
// on which folder is which.
func FolderRole(l *imap.ListData, byAttr bool) string {
	if byAttr {
		for attr, role := range map[imap.MailboxAttr]string{imap.MailboxAttrSent: "sent", imap.MailboxAttrJunk: "spam",
			imap.MailboxAttrTrash: "trash", imap.MailboxAttrArchive: "archive", imap.MailboxAttrDrafts: "drafts"} {
			if slices.Contains(l.Attrs, attr) {
				return role
			}
		}
		return ""
	}
	name := strings.ToLower(l.Mailbox)
	if i := strings.LastIndexAny(name, "/."); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "sent", "sent items", "sent mail", "sent messages":
		return "sent"
	case "spam", "junk", "junk e-mail", "junk email", "bulk mail":
		return "spam"
	case "trash", "deleted items", "deleted messages", "bin":
		return "trash"
	case "archive", "archives":
		return "archive"
	case "drafts", "draft":
		return "drafts"
	}
	return ""
}

// ErrNoSentFolder is answered by SentFolder when the server has no folder marked or named as Sent.
var ErrNoSentFolder = errors.New("mailbox: the server has no Sent folder")

// SentFolder finds the name of the mailbox's Sent folder: the one with the \Sent attribute, else the first
// with a usual Sent name.
func SentFolder(c *imapclient.Client) (string, error) {
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		return "", fmt.Errorf("mailbox: list folders: %w", err)
	}
	for _, byAttr := range []bool{true, false} {
		for _, l := range list {
			if !slices.Contains(l.Attrs, imap.MailboxAttrNoSelect) && FolderRole(l, byAttr) == "sent" {
				return l.Mailbox, nil
			}
		}
	}
	return "", ErrNoSentFolder
}

// FindMessageID reports whether the selected folder holds a message whose Message-ID header is id (with its
// angle brackets, as it was written).
func FindMessageID(c *imapclient.Client, id string) (bool, error) {
	data, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: id}}}, nil).Wait()
	if err != nil {
		return false, fmt.Errorf("mailbox: search for %s: %w", id, err)
	}
	return len(data.AllUIDs()) > 0, nil
}

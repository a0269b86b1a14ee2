package mailbox

import (
	"fmt"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// Services a mailbox connects to; each has its own sealed credential.
const (
	ServiceSMTP = "smtp"
	ServiceIMAP = "imap"
)

// SealPassword seals a mailbox credential for storage. The seal is bound to the organization, the mailbox and
// the service, so a sealed value copied into another row or column does not open there.
func SealPassword(k *seal.Keyring, org, id uuid.UUID, service, password string) []byte {
	return k.Seal([]byte(password), sealContext(org, id, service))
}

func sealContext(org, id uuid.UUID, service string) string {
	return "mailbox-" + service + ":" + org.String() + ":" + id.String()
}

// Servers opens a stored mailbox's SMTP and IMAP endpoints with their credentials, ready to dial. The
// passwords live only in the returned values; callers never log them.
func Servers(k *seal.Keyring, m dbq.Mailbox) (smtpServer, imapServer Server, err error) {
	open := func(service, host string, port int32, user, security string, sealed []byte) (Server, error) {
		pw, err := k.Open(sealed, sealContext(m.OrganizationID, m.ID, service))
		if err != nil {
			return Server{}, fmt.Errorf("mailbox: open the %s credential: %w", service, err)
		}
		return Server{Host: host, Port: int(port), Username: user, Password: string(pw), Security: Security(security)}, nil
	}
	if smtpServer, err = open(ServiceSMTP, m.SmtpHost, m.SmtpPort, m.SmtpUsername, m.SmtpSecurity, m.SmtpPassword); err != nil {
		return Server{}, Server{}, err
	}
	if imapServer, err = open(ServiceIMAP, m.ImapHost, m.ImapPort, m.ImapUsername, m.ImapSecurity, m.ImapPassword); err != nil {
		return Server{}, Server{}, err
	}
	return smtpServer, imapServer, nil
}

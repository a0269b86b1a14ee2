package dsn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/mail/dsn"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestParseClassifiesEachCorpusMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		file       string
		kind       dsn.Kind
		shape      dsn.Shape
		structured bool
		severity   dsn.Severity
		rule       string
		status     string
		smtp       int
		recipient  string
		reason     string
		messageID  string
	}{
		{"A Postfix report of an unknown user is a hard bounce with its 5.1.1 status", "postfix_hard.eml",
			dsn.KindBounce, dsn.ShapePostfix, true, dsn.Hard, dsn.RuleStatusClass5, "5.1.1", 550, "bob@example.net",
			"unknown_user", "0193185e-7c1a-7d2b-9f00-1a2b3c4d5e6f@example.com"},
		{"A Postfix delay warning is a soft delay, not a failure", "postfix_delayed.eml",
			dsn.KindDelay, dsn.ShapePostfix, true, dsn.Soft, dsn.RuleActionDelayed, "4.4.1", 0, "carol@example.net",
			"network", "0193185e-9999-7d2b-9f00-1a2b3c4d5e70@example.com"},
		{"An Exim text bounce with only a basic 550 code is hard by the SMTP code", "exim_hard.eml",
			dsn.KindBounce, dsn.ShapeExim, false, dsn.Hard, dsn.RuleSMTP5xx, "", 550, "dave@example.net",
			"other", "0193185e-aaaa-7d2b-9f00-1a2b3c4d5e71@example.com"},
		{"An Exchange Undeliverable report is a hard bounce read from its delivery-status part", "exchange_hard.eml",
			dsn.KindBounce, dsn.ShapeExchange, true, dsn.Hard, dsn.RuleStatusClass5, "5.1.10", 550, "erin@example.net",
			"unknown_user", "0193185e-bbbb-7d2b-9f00-1a2b3c4d5e72@example.com"},
		{"A Gmail-style text notice of a full mailbox is soft although its class is 5", "gmail_mailbox_full.eml",
			dsn.KindBounce, dsn.ShapeGmail, false, dsn.Soft, dsn.RuleMailboxFull, "5.2.2", 552, "frank@example.net",
			"mailbox_full", "0193185e-cccc-7d2b-9f00-1a2b3c4d5e73@example.com"},
		{"A qmail failure notice from a MAILER-DAEMON is a hard nonstandard bounce", "qmail_nonstandard.eml",
			dsn.KindBounce, dsn.ShapeNonstandard, false, dsn.Hard, dsn.RuleStatusClass5, "5.7.1", 550, "grace@example.net",
			"policy", "0193185e-dddd-7d2b-9f00-1a2b3c4d5e74@example.com"},
		{"An ARF abuse report is a complaint about the original recipient", "arf_abuse.eml",
			dsn.KindComplaint, dsn.ShapeARF, true, "", "", "", 0, "henry@example.net",
			"", "0193185e-eeee-7d2b-9f00-1a2b3c4d5e75@example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, ok := dsn.Parse(read(t, tc.file))
			require.True(t, ok)
			require.Equal(t, tc.kind, r.Kind)
			require.Equal(t, tc.shape, r.Shape)
			require.Equal(t, tc.structured, r.Structured)
			require.Len(t, r.Recipients, 1)
			rc := r.Recipients[0]
			require.Equal(t, tc.recipient, rc.Address)
			require.Equal(t, tc.severity, rc.Severity)
			require.Equal(t, tc.rule, rc.Rule)
			require.Equal(t, tc.status, rc.Status)
			require.Equal(t, tc.smtp, rc.SMTPCode)
			require.Equal(t, tc.reason, rc.Reason)
			require.Equal(t, tc.messageID, r.Original.MessageID)
			if tc.kind != dsn.KindComplaint {
				require.NotEmpty(t, rc.Diagnostic)
			}
		})
	}
}

func TestParseRefusesMessagesThatAreNotReports(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file string }{
		{"A person's reply mentioning codes and an address is not a bounce", "not_reply.eml"},
		{"An out-of-office auto-reply naming a colleague is not a bounce", "not_out_of_office.eml"},
		{"A report of delivered and relayed recipients is not a bounce", "not_delivered_dsn.eml"},
		{"A person's message quoting and attaching a bounce is not a bounce", "not_quoted_bounce.eml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ok := dsn.Parse(read(t, tc.file))
			require.False(t, ok)
		})
	}
}

func TestParseKeepsTheEvidenceAndTheReturnedHeaders(t *testing.T) {
	t.Parallel()
	r, ok := dsn.Parse(read(t, "postfix_hard.eml"))
	require.True(t, ok)
	rc := r.Recipients[0]
	require.Equal(t, "mx.example.net", rc.RemoteMTA)
	require.Equal(t, "bob@example.net", rc.OriginalAddress)
	require.Equal(t, "failed", rc.Action)
	require.Equal(t, "550 5.1.1 <bob@example.net>: Recipient address rejected: User unknown in virtual mailbox table", rc.Diagnostic)
	require.True(t, r.Failed())
	require.Equal(t, "alice@example.com", r.Original.From)
	require.Equal(t, []string{"bob@example.net"}, r.Original.To)
	require.Equal(t, "Quick question about your roadmap", r.Original.Subject)
	require.Equal(t, "mailer-daemon@mx1.example.com", r.From)

	d, ok := dsn.Parse(read(t, "postfix_delayed.eml"))
	require.True(t, ok)
	require.False(t, d.Failed())
	require.Equal(t, "0193185e-8888-7d2b-9f00-1a2b3c4d5e70@example.com", d.Original.InReplyTo)
	require.Equal(t, []string{"0193185e-8888-7d2b-9f00-1a2b3c4d5e70@example.com"}, d.Original.References)

	g, ok := dsn.Parse(read(t, "gmail_mailbox_full.eml"))
	require.True(t, ok)
	require.Equal(t, "0193185e-c000-7d2b-9f00-1a2b3c4d5e73@example.com", g.Original.InReplyTo)
}

func TestParseReadsTheFeedbackReportFields(t *testing.T) {
	t.Parallel()
	r, ok := dsn.Parse(read(t, "arf_abuse.eml"))
	require.True(t, ok)
	require.Equal(t, &dsn.Feedback{
		Type: "abuse", UserAgent: "ExampleFBL/1.0", Version: "1", OriginalMailFrom: "alice@example.com",
		OriginalRcptTo: "henry@example.net", ArrivalDate: "Mon, 18 Nov 2024 11:58:00 +0000",
		ReportedDomain: "example.com", SourceIP: "198.51.100.7",
	}, r.Feedback)
}

func TestParseBoundsTheDiagnosticText(t *testing.T) {
	t.Parallel()
	raw := strings.Replace(string(read(t, "postfix_hard.eml")),
		"User unknown in virtual mailbox table\n\n", "User unknown "+strings.Repeat("x", 2000)+"\n\n", 1)
	r, ok := dsn.Parse([]byte(raw))
	require.True(t, ok)
	require.Len(t, r.Recipients[0].Diagnostic, 512)
}

func TestParseReadsOnlyTheFirstMaxBytes(t *testing.T) {
	t.Parallel()
	raw := string(read(t, "postfix_hard.eml"))
	padded := strings.Replace(raw, "This is the mail system", strings.Repeat("padding line\n", dsn.MaxBytes/13+1)+"This is", 1)
	_, ok := dsn.Parse([]byte(padded))
	require.False(t, ok, "the delivery-status part lies beyond MaxBytes and must not be read")
}

func TestParseRefusesATextBounceWithoutEachPieceOfEvidence(t *testing.T) {
	t.Parallel()
	raw := string(read(t, "exim_hard.eml"))
	person := strings.NewReplacer("Return-path: <>\n", "", "Auto-Submitted: auto-replied\n", "",
		"Mail Delivery System <Mailer-Daemon@mail.example.com>", "Nina <nina@example.net>").Replace(raw)
	noCode := strings.Replace(raw, "550 No such user here", "No such user here", 1)
	noRecipient := strings.Replace(raw, "The following address(es) failed:", "Something went wrong:", 1)
	for name, msg := range map[string]string{"person": person, "no code": noCode, "no recipient": noRecipient} {
		_, ok := dsn.Parse([]byte(msg))
		require.False(t, ok, name)
	}
	_, ok := dsn.Parse([]byte(raw))
	require.True(t, ok, "the unaltered message is a bounce")
}

func TestParseTakesNoStatusCodeFromAHostAddress(t *testing.T) {
	t.Parallel()
	raw := strings.Replace(string(read(t, "exim_hard.eml")), "[192.0.2.40]", "[10.4.4.1]", 1)
	r, ok := dsn.Parse([]byte(raw))
	require.True(t, ok)
	rc := r.Recipients[0]
	require.Equal(t, dsn.Hard, rc.Severity, "10.4.4.1 is the remote host, not the soft status 4.4.1")
	require.Empty(t, rc.Status)
	require.Equal(t, 550, rc.SMTPCode)
	require.Equal(t, dsn.RuleSMTP5xx, rc.Rule)
}

func TestDiagnoseJudgesAnSMTPReplyAsAReportsDiagnosticIsJudged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text     string
		severity dsn.Severity
		status   string
		smtp     int
		reason   string
	}{
		{"RCPT: 550 5.1.1 No such user", dsn.Hard, "5.1.1", 550, "unknown_user"},
		{"550 5.7.1 Message rejected as spam", dsn.Hard, "5.7.1", 550, "policy"},
		{"452 4.2.2 Mailbox full", dsn.Soft, "4.2.2", 452, "mailbox_full"},
		{"host 10.4.4.1 said: 550 User unknown", dsn.Hard, "", 550, "other"},
		{"The address does not exist", dsn.Hard, "", 0, "other"},
	}
	for _, tc := range cases {
		rc := dsn.Diagnose(tc.text)
		require.Equal(t, tc.severity, rc.Severity, tc.text)
		require.Equal(t, tc.status, rc.Status, tc.text)
		require.Equal(t, tc.smtp, rc.SMTPCode, tc.text)
		require.Equal(t, tc.reason, rc.Reason, tc.text)
		require.Equal(t, tc.text, rc.Diagnostic)
		require.Equal(t, "failed", rc.Action)
	}
}

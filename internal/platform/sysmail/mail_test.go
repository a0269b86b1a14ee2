package sysmail_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

func TestSMTPSenderUsesSTARTTLSAndAuth(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewSMTPServer(t, "relay", "pw")
	s, err := sysmail.NewSMTPSender("smtp://relay:pw@"+srv.Addr, "Outflow <no-reply@outflow.test>", srv.ClientTLS)
	require.NoError(t, err)
	require.NoError(t, s.Send(context.Background(), sysmail.Message{To: "ada@example.com", Subject: "Your code: 123456", Text: "Code 123456\nValid 10 minutes."}))

	got := srv.Messages()
	require.Len(t, got, 1)
	require.Equal(t, "no-reply@outflow.test", got[0].From)
	require.Equal(t, []string{"ada@example.com"}, got[0].To)
	body := string(got[0].Data)
	require.Contains(t, body, "Subject: Your code: 123456\r\n")
	require.Contains(t, body, "Code 123456\r\nValid 10 minutes.")

	bad, err := sysmail.NewSMTPSender("smtp://relay:wrong@"+srv.Addr, "no-reply@outflow.test", srv.ClientTLS)
	require.NoError(t, err)
	require.ErrorContains(t, bad.Send(context.Background(), sysmail.Message{To: "ada@example.com", Subject: "x", Text: "x"}), "authenticate")
}

func TestLogSenderPutsEverythingOnOneLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := sysmail.LogSender{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}
	require.NoError(t, l.Send(context.Background(), sysmail.Message{To: "ada@example.com", Subject: "Your code", Text: "Code 654321"}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], `"level":"WARN"`)
	require.Contains(t, lines[0], "ada@example.com")
	require.Contains(t, lines[0], "654321")
}

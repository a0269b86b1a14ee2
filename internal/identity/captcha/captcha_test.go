package captcha_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/captcha"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func TestTurnstile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		require.Equal(t, "s3cret", r.PostForm.Get("secret"))
		require.Equal(t, "203.0.113.9", r.PostForm.Get("remoteip"))
		if r.PostForm.Get("response") == "good" {
			_, _ = w.Write([]byte(`{"success":true}`))
			return
		}
		_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
	}))
	defer srv.Close()
	v := captcha.NewTurnstile("s3cret", srv.URL)
	ctx := context.Background()

	require.NoError(t, v.Verify(ctx, "good", "203.0.113.9"))
	for _, bad := range []string{"bad", ""} {
		var e *apierror.Error
		require.True(t, errors.As(v.Verify(ctx, bad, "203.0.113.9"), &e))
		require.Equal(t, 403, e.Status)
		require.Equal(t, "captcha_rejected", e.Code)
	}
	require.NoError(t, captcha.Off{}.Verify(ctx, "", ""))
}

package handlers_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func TestMultipartTextIsCheckedOnlyForAnAdmittedCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	upload := func(token string) (int, apierror.Envelope) {
		t.Helper()
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		require.NoError(t, mw.WriteField("options", "{\"dedup\":\"skip\x00\"}"))
		fw, err := mw.CreateFormFile("file", "contacts.csv")
		require.NoError(t, err)
		_, _ = fw.Write([]byte("email\nada@example.com\n"))
		require.NoError(t, mw.Close())
		resp := env.Do(t, http.MethodPost, "/v1/contacts/import/commit", token, &buf,
			http.Header{"Content-Type": {mw.FormDataContentType()}})
		defer resp.Body.Close()
		var env apierror.Envelope
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		return resp.StatusCode, env
	}
	status, e := upload("")
	require.Equal(t, http.StatusUnauthorized, status, "an anonymous upload is refused without its body being parsed")
	require.Equal(t, "missing_credential", e.Code)
	status, e = upload("ofk_not_a_key_at_all_000000000000000000")
	require.Equal(t, http.StatusUnauthorized, status, "nor is one whose credential the server does not admit")
	status, e = upload(boot.APIKey)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_text", e.Code)
	require.Contains(t, e.Message, "options")
}

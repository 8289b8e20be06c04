package resp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPooledMessages: a pooled request or reply carries what it was made
// with, renders like its value form, and Recycle clears it (race builds
// poison it instead, naming the mistake).
func TestPooledMessages(t *testing.T) {
	req := NewRequest(3, []string{"GET", "k"})
	assert.Equal(t, Request{ID: 3, Args: []string{"GET", "k"}}, *req)
	assert.Equal(t, "req 3 GET k", string(req.AppendTrace(nil)))
	rep := NewReply(3, Bulk("v"))
	assert.Equal(t, Reply{ID: 3, Value: Bulk("v")}, *rep)
	assert.Equal(t, `rep 3 "v"`, string(rep.AppendTrace(nil)))

	req.Recycle()
	rep.Recycle()
	if poisonRecycled {
		assert.Equal(t, poisonID, req.ID)
		assert.Equal(t, Err(poisonText), rep.Value)
		assert.Contains(t, poisonText, "used after its Receive returned")
	} else {
		assert.Equal(t, Request{}, *req)
		assert.Equal(t, Reply{}, *rep)
	}
}

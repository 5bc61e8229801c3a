package service

import "github.com/perfbot/perfbot/views"

// readViews reads what b recorded as perfbot serve does: through the read
// side, with the health of b's hosts when it has an Oracle.
func readViews(b *Bot) *views.Views {
	v := views.New(b.Config, b.Store)
	if b.Oracle != nil {
		v.HostStates = b.Oracle.HostStates
	}
	return v
}

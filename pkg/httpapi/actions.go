package httpapi

import "github.com/gorilla/mux"

// ActionsConfig wires the wallet actions, which are ledger commands.
type ActionsConfig struct{}

// registerWalletActions adds approve, reject and the two redeem operations.
func (s *Server) registerWalletActions(mf, admin *mux.Router) {}

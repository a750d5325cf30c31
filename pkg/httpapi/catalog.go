package httpapi

import "github.com/gorilla/mux"

// CatalogConfig wires the list and update operations.
type CatalogConfig struct{}

// registerCatalog adds the paginated lists and the PATCH operations.
func (s *Server) registerCatalog(admin *mux.Router) {}

# One image with every program; choose one with the command, e.g.
#   docker run convida /convida/ledger
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/api ./cmd/ingest ./cmd/ledger ./cmd/dispatcher ./cmd/scheduler ./cmd/standalone

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /convida/
USER nonroot
EXPOSE 8080 8081 9090
ENTRYPOINT []
CMD ["/convida/api"]

package mcp

import (
	"context"
	"fmt"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// The wire shapes of the resources results before 2026-07-28: go-sdk's
// results always carry the ttlMs and cacheScope cache hints, which exist
// only from 2026-07-28 on (docs/mcp-server.md#2.3).
type (
	resourceList struct {
		sdkmcp.ResultBase
		NextCursor string             `json:"nextCursor,omitempty"`
		Resources  []*sdkmcp.Resource `json:"resources"`
	}
	resourceTemplateList struct {
		sdkmcp.ResultBase
		NextCursor        string                     `json:"nextCursor,omitempty"`
		ResourceTemplates []*sdkmcp.ResourceTemplate `json:"resourceTemplates"`
	}
	resourceRead struct {
		sdkmcp.ResultBase
		Contents []*sdkmcp.ResourceContents `json:"contents"`
	}
)

// renderResources answers resources/list, resources/templates/list and
// resources/read of a session before 2026-07-28 without the cache hints
// go-sdk adds; a 2026-07-28 request gets go-sdk's result as it is.
func (s *Server) renderResources(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		switch method {
		case protocol.MethodResourcesList, protocol.MethodResourcesTemplatesList, protocol.MethodResourcesRead:
		default:
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil || shapeFor(s.requestVersion(req)).sessionless {
			return res, err
		}
		switch r := res.(type) {
		case *sdkmcp.ListResourcesResult:
			return &resourceList{ResultBase: sdkmcp.ResultBase{Meta: r.Meta}, NextCursor: r.NextCursor, Resources: r.Resources}, nil
		case *sdkmcp.ListResourceTemplatesResult:
			return &resourceTemplateList{ResultBase: sdkmcp.ResultBase{Meta: r.Meta}, NextCursor: r.NextCursor, ResourceTemplates: r.ResourceTemplates}, nil
		case *sdkmcp.ReadResourceResult:
			return &resourceRead{ResultBase: sdkmcp.ResultBase{Meta: r.Meta}, Contents: r.Contents}, nil
		}
		return nil, fmt.Errorf("%s returned %T", method, res)
	}
}

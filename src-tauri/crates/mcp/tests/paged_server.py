"""An MCP server (the MCP Python SDK's low-level server) that lists its five tools two per
page, so a client must follow `nextCursor` to see them all; each tool answers with its name."""

import anyio
from mcp import types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

NAMES = [f"tool{i}" for i in range(5)]
PAGE = 2


async def list_tools(ctx, params):
    start = int(params.cursor) if params and params.cursor else 0
    page = NAMES[start:start + PAGE]
    tools = [
        types.Tool(name=name, description=f"Answer with {name}.", input_schema={"type": "object"})
        for name in page
    ]
    more = start + PAGE < len(NAMES)
    return types.ListToolsResult(tools=tools, next_cursor=str(start + PAGE) if more else None)


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


anyio.run(main)

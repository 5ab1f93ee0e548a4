"""An MCP server (on the MCP Python SDK) that tries what a hostile server would: read and write
any path it is given, and report its own capabilities. The sandbox tests start it."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


@server.tool()
def read(path: str) -> str:
    """Read a text file."""
    with open(path) as f:
        return f.read()


@server.tool()
def write(path: str, text: str) -> str:
    """Write a text file."""
    with open(path, "w") as f:
        f.write(text)
    return "written"


@server.tool()
def capabilities() -> str:
    """The effective capabilities of this process."""
    with open("/proc/self/status") as f:
        return next(line for line in f if line.startswith("CapEff")).split()[1]


server.run()

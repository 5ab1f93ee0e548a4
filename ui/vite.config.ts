import { defineConfig } from "vitest/config";

// The webview's build: `ui/` is the root, `ui/dist` what the app embeds. The dev server's
// port is the one tauri.conf.json's devUrl names.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "safari16",
    chunkSizeWarningLimit: 2048,
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
  },
});

import { App } from "./app";

// Policy violations are recorded where the end-to-end tests can read them: a strict policy
// that silently breaks a feature would otherwise go unnoticed.
const violations: string[] = [];
document.addEventListener("securitypolicyviolation", (event) => {
  violations.push(`${event.violatedDirective}: ${event.blockedURI || "inline"}`);
});
(window as unknown as { lanternPolicyViolations: string[] }).lanternPolicyViolations = violations;

const root = document.getElementById("app");
if (root) void new App(root).start();

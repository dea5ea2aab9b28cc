import "./theme.css";
import "./styles.css";
import "./i18n";
import { effect } from "@preact/signals-react";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app";
import { loadNotice } from "./stores/notice";
import { loadStatus } from "./stores/status";
import { theme } from "./stores/theme";
import { validateSession } from "./stores/user";
import { startLiveUpdates } from "./ws/topics";

effect(() => {
  document.documentElement.dataset.theme = theme.value;
  document.documentElement.style.colorScheme = theme.value;
});

void loadStatus();
void loadNotice();
validateSession();
startLiveUpdates();

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}

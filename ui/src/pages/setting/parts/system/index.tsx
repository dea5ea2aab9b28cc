import { useSignals } from "@preact/signals-react/runtime";
import { Grid } from "@radix-ui/themes";
import { useEffect } from "react";
import { loadOptions, optionsLoaded } from "../../../../stores/options";
import { OptionsLoading } from "../option-form/options-loading";
import { closeDialog } from "./dialogs";
import { LoginSection } from "./login-section";
import { GitHubSection, LinuxDOSection, SmtpSection, TelegramSection, TurnstileSection, WeChatSection } from "./provider-sections";
import { PaymentSection, ServerSection, WorkerSection } from "./server-sections";
import { SystemDialogs } from "./system-dialogs";
import { WhitelistSection } from "./whitelist-section";

/** SystemTab assembles the system settings (root only) and mounts their dialogs. */
export default function SystemTab() {
  useSignals();
  useEffect(() => {
    closeDialog();
    void loadOptions();
  }, []);
  if (!optionsLoaded.value) return <OptionsLoading />;
  return (
    <>
      <Grid columns={{ initial: "1", md: "2" }} gap="4" align="start" data-testid="system-tab">
        <ServerSection />
        <WorkerSection />
        <LoginSection />
        <PaymentSection />
        <WhitelistSection />
        <SmtpSection />
        <GitHubSection />
        <LinuxDOSection />
        <WeChatSection />
        <TelegramSection />
        <TurnstileSection />
      </Grid>
      <SystemDialogs />
    </>
  );
}

import { useSignals } from "@preact/signals-react/runtime";
import { Grid } from "@radix-ui/themes";
import { useEffect } from "react";
import { loadOptions, optionsLoaded } from "../../../../stores/options";
import { OptionsLoading } from "../option-form/options-loading";
import { ChatsSection } from "./chats-section";
import { DashboardSection } from "./dashboard-section";
import { closeDialog } from "./dialogs";
import { DrawingSection } from "./drawing-section";
import { GeneralSection } from "./general-section";
import { LogSection } from "./log-section";
import { MonitorSection } from "./monitor-section";
import { OperationDialogs } from "./operation-dialogs";
import { discardPricing } from "./pricing";
import { PricingTable } from "./pricing-table";
import { QuotaSection } from "./quota-section";
import { RatioSection } from "./ratio-section";
import { SensitiveSection } from "./sensitive-section";

/** OperationTab assembles the operation settings (root only) and mounts their dialogs. */
export default function OperationTab() {
  useSignals();
  useEffect(() => {
    closeDialog();
    discardPricing();
    void loadOptions();
  }, []);
  if (!optionsLoaded.value) return <OptionsLoading />;
  return (
    <>
      <Grid columns={{ initial: "1", md: "2" }} gap="4" align="start" data-testid="operation-tab">
        <GeneralSection />
        <ChatsSection />
        <QuotaSection />
        <MonitorSection />
        <DrawingSection />
        <SensitiveSection />
        <LogSection />
        <DashboardSection />
        <RatioSection />
        <PricingTable />
      </Grid>
      <OperationDialogs />
    </>
  );
}

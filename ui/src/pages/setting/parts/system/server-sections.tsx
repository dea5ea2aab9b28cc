import { useTranslation } from "react-i18next";
import { options } from "../../../../stores/options";
import { toast } from "../../../../stores/toast";
import { SpecSection } from "../option-form/spec-section";

/** ServerSection sets the public server address and the private hosts outbound calls may reach. */
export function ServerSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.server.${k}`);
  return (
    <SpecSection
      id="server"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "ServerAddress", kind: "text", trimSlash: true, label: l("ServerAddress"), hint: l("ServerAddressHint"), placeholder: "https://yourdomain.com" },
        { key: "EgressAllowedHosts", kind: "text", label: l("EgressAllowedHosts"), hint: l("EgressAllowedHostsHint"), placeholder: "10.0.0.5,ollama.internal,192.168.0.0/16" },
      ]}
    />
  );
}

/** WorkerSection sets the proxy worker used for external resources. */
export function WorkerSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.worker.${k}`);
  return (
    <SpecSection
      id="worker"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "WorkerUrl", kind: "text", trimSlash: true, label: l("WorkerUrl"), placeholder: l("WorkerUrlPlaceholder") },
        { key: "WorkerValidKey", kind: "secret", label: l("WorkerValidKey") },
      ]}
    />
  );
}

/** PaymentSection configures online top-up; the server address must be saved first, since it is the callback. */
export function PaymentSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.payment.${k}`);
  return (
    <SpecSection
      id="payment"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      validate={() => {
        if ((options.value.ServerAddress ?? "").trim() === "") {
          toast.error(l("needServerAddress"));
          return false;
        }
        return true;
      }}
      fields={[
        { key: "PayAddress", kind: "text", trimSlash: true, label: l("PayAddress"), placeholder: "https://pay.example.com" },
        { key: "EpayId", kind: "text", label: l("EpayId") },
        { key: "EpayKey", kind: "secret", label: l("EpayKey") },
        { key: "CustomCallbackAddress", kind: "text", trimSlash: true, label: l("CustomCallbackAddress"), hint: l("CustomCallbackAddressHint") },
        { key: "Price", kind: "number", min: 0, label: l("Price") },
        { key: "MinTopUp", kind: "number", min: 1, integer: true, label: l("MinTopUp") },
        { key: "TopupGroupRatio", kind: "textarea", json: "ratioMap", rows: 5, label: l("TopupGroupRatio"), hint: l("TopupGroupRatioHint") },
      ]}
    />
  );
}

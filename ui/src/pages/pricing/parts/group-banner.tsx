import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Callout, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Icon } from "../../../components/icons";
import { chooseGroup, chosenGroup, groupRatio, ownGroup, ratioOf, viewedGroup } from "../../../stores/pricing";
import { quotaPerUnit } from "../../../stores/status";
import { isLoggedIn } from "../../../stores/user";

/** GroupBanner says whose ratio the prices use and lets the visitor switch groups by click. */
export function GroupBanner() {
  useSignals();
  const { t } = useTranslation();
  const own = ownGroup.value;
  const viewed = viewedGroup.value;
  const groups = Object.keys(groupRatio.value).sort();
  return (
    <Flex direction="column" gap="2">
      {isLoggedIn.value ? (
        <Callout.Root color="green" size="1" data-testid="pricing-own-group">
          <Callout.Icon>
            <Icon name="info" />
          </Callout.Icon>
          <Callout.Text>{t("pricing.ownGroup", { group: own, ratio: ratioOf(own) })}</Callout.Text>
        </Callout.Root>
      ) : (
        <Callout.Root color="orange" size="1" data-testid="pricing-not-logged-in">
          <Callout.Icon>
            <Icon name="alert" />
          </Callout.Icon>
          <Callout.Text>{t("pricing.notLoggedIn", { ratio: ratioOf("default") })}</Callout.Text>
        </Callout.Root>
      )}
      {chosenGroup.value !== null && chosenGroup.value !== own ? (
        <Callout.Root color="blue" size="1" data-testid="pricing-viewing-group">
          <Callout.Icon>
            <Icon name="info" />
          </Callout.Icon>
          <Callout.Text>
            {t("pricing.viewingGroup", { group: viewed, ratio: ratioOf(viewed) })}{" "}
            <Button size="1" variant="ghost" onClick={() => (chosenGroup.value = null)}>
              {t("pricing.backToOwn")}
            </Button>
          </Callout.Text>
        </Callout.Root>
      ) : null}
      {groups.length > 0 ? (
        <Flex gap="2" align="center" wrap="wrap" data-testid="pricing-groups">
          <Text size="2" color="gray">
            {t("pricing.groups")}:
          </Text>
          {groups.map((g) => (
            <Badge
              key={g}
              asChild
              color={g === viewed ? "indigo" : "gray"}
              variant={g === viewed ? "solid" : "soft"}
              className="pricing-chip"
            >
              <button type="button" onClick={() => chooseGroup(g)} title={t("pricing.groupsHint")} data-group={g} aria-pressed={g === viewed}>
                {g} × {ratioOf(g)}
              </button>
            </Badge>
          ))}
        </Flex>
      ) : null}
      <Text size="1" color="gray" data-testid="pricing-formula">
        {t("pricing.formula", { perUnit: quotaPerUnit.value })}
      </Text>
    </Flex>
  );
}

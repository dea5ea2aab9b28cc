import { Grid } from "@radix-ui/themes";
import { useEffect } from "react";
import { refreshSelf } from "../../../../stores/user";
import { AccessTokenCard } from "./access-token-card";
import { BindingsCard } from "./bindings-card";
import { DeleteAccountCard } from "./delete-account-card";
import { InviteCard } from "./invite-card";
import { PasswordCard } from "./password-card";
import { PersonalDialogs } from "./personal-dialogs";
import { ProfileCard } from "./profile-card";

/** PersonalTab assembles the account cards and mounts their dialogs. */
export default function PersonalTab() {
  useEffect(() => {
    void refreshSelf().catch(() => {});
  }, []);
  return (
    <>
      <Grid columns={{ initial: "1", md: "2" }} gap="4" align="start" data-testid="personal-tab">
        <ProfileCard />
        <InviteCard />
        <BindingsCard />
        <AccessTokenCard />
        <PasswordCard />
        <DeleteAccountCard />
      </Grid>
      <PersonalDialogs />
    </>
  );
}
